import type { AxisValue } from './axis-value';

/**
 * The "Other (N)" row or column (otherRow, otherColumn): a key of one part, its label, that no value
 * can be mistaken for. It is known by identity, not by its text: a real key "Other (3)" is a key like
 * any other. What it stands for (how many outer values, which were kept) rides along for the renderers
 * and its drill query.
 */
export interface OtherInfo {
  /** How many outermost values it stands for. */
  count: number;
  /** The outermost values shown: Other is every record whose outermost key is none of these. */
  kept: readonly AxisValue[];
}

const others = new WeakMap<readonly AxisValue[], OtherInfo>();

export const otherLabel = (count: number) => `Other (${count})`;

/**
 * The Other key, labelled "Other (N)" unless a shown key reads the same (`shown`): then the label says
 * what it stands for, "Other (N values)", so that CSV, HTML and XLSX, which show labels only, tell the
 * two apart (JSON marks the Other row itself).
 */
export function otherKey(info: OtherInfo, shown: (label: string) => boolean = () => false): AxisValue[] {
  const plain = otherLabel(info.count);
  const told = `Other (${info.count} ${info.count === 1 ? 'value' : 'values'})`;
  let label = shown(plain) ? told : plain;
  for (let n = 2; shown(label); n++) label = `${told} #${n}`;
  const key: AxisValue[] = [label];
  others.set(key, info);
  return key;
}

/** What an Other key stands for; undefined for every other key. */
export const otherOf = (key: readonly AxisValue[]): OtherInfo | undefined => others.get(key);
