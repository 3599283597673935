import * as XLSX from 'xlsx';
import type { TotalFormat } from '@quarry/contract';
import { contrastRatio, excelFormat, textColorOn } from './total-look';

/** What Excel (SheetJS's SSF, which follows Excel's rules) prints for a value under a format. */
const excel = (fmt: string, v: number) => XLSX.SSF.format(fmt, v);

describe('excelFormat: the Excel number format writes what Intl writes', () => {
  it.each([
    [{ style: 'decimal' as const, minimumFractionDigits: 2, maximumFractionDigits: 2 }, 1234.5, '1,234.50'],
    [{ style: 'decimal' as const, maximumFractionDigits: 0 }, 1234.5, '1,235'],
    [{ style: 'currency' as const, currency: 'EUR' }, 1234.5, '€1,234.50'],
    [{ style: 'currency' as const, currency: 'usd' }, 99, '$99.00'],
    [{ style: 'currency' as const, currency: 'JPY' }, 1234.4, '¥1,234'],
    [{ style: 'percent' as const, minimumFractionDigits: 1, maximumFractionDigits: 1 }, 0.256, '25.6%'],
    [
      { style: 'unit' as const, unit: 'kilometer', minimumFractionDigits: 1, maximumFractionDigits: 1 },
      12.34,
      '12.3 km',
    ],
    [{ style: 'unit' as const, unit: 'kilometer-per-hour', maximumFractionDigits: 0 }, 88.4, '88 km/h'],
  ])('%j of %d', (format: TotalFormat, v, want) => {
    const intl = new Intl.NumberFormat('en-US', { ...format, currency: format.currency?.toUpperCase() }).format(v);
    expect(intl).toBe(want);
    expect(excel(excelFormat(format, false), v)).toBe(want);
  });

  it('optional digits: Excel keeps at least one decimal where Intl may drop them all (it cannot drop the point)', () => {
    expect(excelFormat({ maximumFractionDigits: 2 }, false)).toBe('#,##0.0#');
    expect(excelFormat({ minimumFractionDigits: 2, maximumFractionDigits: 4 }, false)).toBe('#,##0.00##');
    expect(excelFormat({ style: 'currency', currency: 'EUR', maximumFractionDigits: 0 }, false)).toBe('"€"#,##0');
  });

  it('a total shown as a percentage (0-100) is written as a percent of its fraction', () => {
    const fmt = excelFormat({ style: 'decimal', minimumFractionDigits: 1, maximumFractionDigits: 1 }, true);
    // XLSX cells of a percentage hold the fraction.
    expect(excel(fmt, 0.1234)).toBe('12.3%');
  });

  it('compact notation: thousands and millions as K and M, small numbers in full', () => {
    const fmt = excelFormat({ notation: 'compact', minimumFractionDigits: 1, maximumFractionDigits: 1 }, false);
    expect(excel(fmt, 1_234_567)).toBe('1.2M');
    expect(excel(fmt, 12_345)).toBe('12.3K');
    expect(excel(fmt, 12)).toBe('12.0');
    const money = excelFormat({ style: 'currency', currency: 'EUR', notation: 'compact' }, false);
    expect(excel(money, 2_500_000)).toBe('€2.5M');
    expect(
      new Intl.NumberFormat('en-US', { style: 'currency', currency: 'EUR', notation: 'compact' }).format(2_500_000),
    ).toBe('€2.5M');
  });
});

describe('textColorOn: text readable on any background', () => {
  it.each(['#ffffff', '#000000', '#ff0000', '#00ff00', '#0000ff', '#777777', '#808080', '#ffff00', '#1e90ff'])(
    'on %s the chosen text has contrast ≥ 4.5:1',
    (bg) => {
      expect(contrastRatio(bg, textColorOn(bg))).toBeGreaterThanOrEqual(4.5);
    },
  );

  it('picks the better of black and white', () => {
    expect(textColorOn('#ffff00')).toBe('#000000');
    expect(textColorOn('#00008b')).toBe('#ffffff');
    // WCAG's own figures: white on black is 21:1.
    expect(contrastRatio('#ffffff', '#000000')).toBeCloseTo(21, 5);
  });
});
