import type { CalendarGroup, TotalCompare } from '@quarry/contract';

/* The shapes of a period comparison that the spec, the engine and the renderers share. */

/** A compared total's comparison and the period it is made on. */
export type CompareSpec = TotalCompare & { period: CalendarGroup };

/** How far a record's local time moves forward so that it lands on the period it is compared with. */
export interface PeriodShift {
  /** The date field shifted (every axis on it is grouped from the shifted time). */
  field: string;
  unit: 'month' | 'day' | 'hour';
  n: number;
  /** Local time of the data's last record (YYYY-MM-DD HH:MM:SS.ffffff): shifted records after it are left out. */
  cut?: string;
  /** Stored times before this (YYYY-MM-DD HH:MM:SS) shift to before the last period: no cut to test. */
  safe?: string;
  /**
   * Every axis on the field groups by the period itself: a group's key moves by the shift, so records
   * are grouped as they are and only the keys move (no date arithmetic per record).
   */
  onKeys?: boolean;
}

/** The data's last period, as the engine found it for a shift. */
export interface LastPeriod {
  /** Local time of the last record. */
  last: string;
  /** The last period's key, as its axis reports keys. */
  key: string;
  /** As PeriodShift.safe. */
  safe: string;
  /** The compared period has records beyond the last record's elapsed span: the comparison was cut. */
  partial: boolean;
}

/** What a table says of a partial last period. */
export interface ComparePartial {
  on: 'rows' | 'columns';
  field: string;
  key: string;
  lastRecord: string;
}
