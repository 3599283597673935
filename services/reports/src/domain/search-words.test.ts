import { searchText, searchWords } from './search-words';

describe('the words a report is found by', () => {
  it('are the distinct lower-cased words of the name and the description', () => {
    expect(searchWords('Top Grossing dramas', 'Dramas by worldwide gross, 2020–21; Café')).toEqual([
      'top',
      'grossing',
      'dramas',
      'by',
      'worldwide',
      'gross',
      '2020',
      '21',
      'café',
    ]);
    expect(searchWords('', '')).toEqual([]);
  });

  it('are the same words the text search of the embedded store is made of', () => {
    const name = 'Airports by state';
    const description = 'Counts per state';
    expect(searchText(name, description).trim().split(' ')).toEqual(
      expect.arrayContaining(searchWords(name, description)),
    );
  });
});
