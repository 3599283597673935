import { RecordCounter } from './record-counter';

/** Every way to cut a text in two pieces, fed to a fresh counter. */
function countsAtEverySplit(format: 'csv' | 'jsonl', text: string): number[] {
  const bytes = Buffer.from(text);
  const counts: number[] = [];
  for (let cut = 0; cut <= bytes.length; cut++) {
    const c = new RecordCounter(format);
    c.feed(bytes.subarray(0, cut));
    c.feed(bytes.subarray(cut));
    counts.push(c.records);
  }
  return counts;
}

describe('RecordCounter', () => {
  it('counts CSV records past quoted newlines and doubled quotes, however the file is cut', () => {
    const csv = 'a,b\n"two\nlines","say ""hi"", ok"\nplain,1\n"",x\n"\n\n",""""\n';
    const counts = countsAtEverySplit('csv', csv);
    expect(new Set(counts)).toEqual(new Set([4]));
  });

  it('counts only whole records while a CSV is half written', () => {
    const c = new RecordCounter('csv');
    c.feed(Buffer.from('a,b\n1,"x\ny'));
    expect(c.records).toBe(0);
    c.feed(Buffer.from('"\n2,z'));
    expect(c.records).toBe(1);
    c.feed(Buffer.from('\n'));
    expect(c.records).toBe(2);
  });

  it('counts JSON Lines by their newlines (JSON escapes any inside a value)', () => {
    const jsonl = `${JSON.stringify({ t: 'two\nlines "q"' })}\n${JSON.stringify({ t: '' })}\n`;
    expect(new Set(countsAtEverySplit('jsonl', jsonl))).toEqual(new Set([2]));
  });

  it('a header alone, or nothing, is no record', () => {
    expect(countsAtEverySplit('csv', 'a,b\n')).toEqual(Array(5).fill(0));
    expect(new RecordCounter('csv').records).toBe(0);
  });
});
