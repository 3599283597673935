import { MessageChannel, receiveMessageOnPort } from 'node:worker_threads';
import type { AxisValue, GroupRow } from '../../domain/axis-value';
import { packGroups, packedBuffers, unpackGroups, type PackedGroups } from './packed-groups';

describe('packed groups (a big table handed to a render thread)', () => {
  const sharedRow: AxisValue[] = ['SFO'];
  const groups: GroupRow[] = [
    { rowKey: sharedRow, columnKey: ['2001-01', 3], values: [1.5, null, -0] },
    { rowKey: sharedRow, columnKey: [], values: [null, 7, 2 ** 53] },
    { rowKey: [], columnKey: [], values: [0, Number.MAX_VALUE, -1e-300] },
    { rowKey: [null, true, ''], columnKey: [false], values: [null, null, null] },
  ];

  it('comes back as the same groups, empty values apart from zeros', async () => {
    const back = unpackGroups(await packGroups(groups, 3));
    expect(back).toEqual(groups);
    expect(Object.is(back[0].values[2], -0)).toBe(true);
    expect(back[1].values[0]).toBeNull();
    expect(back[2].values[0]).toBe(0);
  });

  it('holds each shared key array once, and keeps it shared', async () => {
    const packed = await packGroups(groups, 3);
    expect(packed.keys.filter((k) => k === sharedRow)).toHaveLength(1);
    const back = unpackGroups(packed);
    expect(back[0].rowKey).toBe(back[1].rowKey);
  });

  it('moves its arrays through a message port instead of copying them', async () => {
    const packed = await packGroups(groups, 3);
    const { port1, port2 } = new MessageChannel();
    port1.postMessage(packed, packedBuffers(packed));
    // Moved: the sender's arrays are detached.
    expect(packed.values.length).toBe(0);
    expect(packed.rowKey.length).toBe(0);
    const received = receiveMessageOnPort(port2)?.message as PackedGroups;
    port1.close();
    expect(unpackGroups(received)).toEqual(groups);
  });

  it('packs no groups, and many groups across its yields', async () => {
    expect(unpackGroups(await packGroups([], 2))).toEqual([]);
    const many: GroupRow[] = Array.from({ length: 50_001 }, (_, i) => ({
      rowKey: [`r${i % 480}`],
      columnKey: [i % 200],
      values: [i % 7 === 0 ? null : i],
    }));
    const back = unpackGroups(await packGroups(many, 1));
    expect(back).toEqual(many);
  });
});
