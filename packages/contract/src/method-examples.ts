// Written by tests/openrpc.test.ts (QUARRY_UPDATE_EXAMPLES=1) from real calls on the sample data; that
// test fails when a call no longer answers what is written here.
import type { MethodName } from './methods';

export interface MethodExample {
  name: string;
  params: Record<string, unknown>;
  result: unknown;
}

export const METHOD_EXAMPLES: Record<MethodName, MethodExample> = {
  'QUERIES.EXECUTE': {
    name: 'two Star Wars films, oldest first',
    params: {
      index: 'movies',
      query: 'Title:"Star Wars"',
      pageSize: 2,
      sort: [
        {
          field: 'Release Date',
          direction: 'asc',
        },
      ],
    },
    result: {
      index: 'movies',
      query: 'Title:"Star Wars"',
      page: 1,
      pageSize: 2,
      total: 7,
      totalPages: 4,
      fields: [
        {
          name: 'Title',
          type: 'string',
        },
        {
          name: 'US Gross',
          type: 'integer',
        },
        {
          name: 'Worldwide Gross',
          type: 'integer',
        },
        {
          name: 'US DVD Sales',
          type: 'integer',
        },
        {
          name: 'Production Budget',
          type: 'integer',
        },
        {
          name: 'Release Date',
          type: 'date',
        },
        {
          name: 'MPAA Rating',
          type: 'string',
        },
        {
          name: 'Running Time min',
          type: 'integer',
        },
        {
          name: 'Distributor',
          type: 'string',
        },
        {
          name: 'Source',
          type: 'string',
        },
        {
          name: 'Major Genre',
          type: 'string',
        },
        {
          name: 'Creative Type',
          type: 'string',
        },
        {
          name: 'Director',
          type: 'string',
        },
        {
          name: 'Rotten Tomatoes Rating',
          type: 'integer',
        },
        {
          name: 'IMDB Rating',
          type: 'number',
        },
        {
          name: 'IMDB Votes',
          type: 'integer',
        },
      ],
      records: [
        {
          Title: 'Star Wars Ep. IV: A New Hope',
          'US Gross': 460998007,
          'Worldwide Gross': 797900000,
          'US DVD Sales': 11182540,
          'Production Budget': 11000000,
          'Release Date': '1977-05-25',
          'MPAA Rating': 'PG',
          'Running Time min': null,
          Distributor: '20th Century Fox',
          Source: 'Original Screenplay',
          'Major Genre': 'Adventure',
          'Creative Type': 'Science Fiction',
          Director: 'George Lucas',
          'Rotten Tomatoes Rating': null,
          'IMDB Rating': null,
          'IMDB Votes': null,
        },
        {
          Title: 'Star Wars Ep. V: The Empire Strikes Back',
          'US Gross': 290271960,
          'Worldwide Gross': 534171960,
          'US DVD Sales': 10027926,
          'Production Budget': 23000000,
          'Release Date': '1980-05-21',
          'MPAA Rating': 'PG',
          'Running Time min': null,
          Distributor: '20th Century Fox',
          Source: 'Original Screenplay',
          'Major Genre': 'Adventure',
          'Creative Type': 'Science Fiction',
          Director: null,
          'Rotten Tomatoes Rating': null,
          'IMDB Rating': null,
          'IMDB Votes': null,
        },
      ],
    },
  },
  'INDEXES.FIND': {
    name: 'the flights index',
    params: {
      searchText: 'flights',
      limit: 1,
    },
    result: {
      indexes: [
        {
          name: 'flights',
          description: 'US flight delays, January to March 2001',
          recordCount: 20000,
          fields: [
            {
              name: 'date',
              type: 'date',
            },
            {
              name: 'delay',
              type: 'integer',
            },
            {
              name: 'distance',
              type: 'integer',
            },
            {
              name: 'origin',
              type: 'string',
            },
            {
              name: 'destination',
              type: 'string',
            },
          ],
          dynamicViews: ['Records', 'Destinations'],
          updatedAt: '2026-11-23T01:56:32.186Z',
        },
      ],
      nextCursor: null,
    },
  },
  'CROSSTAB.EXECUTE': {
    name: 'top 3 destinations from SFO as JSON',
    params: {
      index: 'flights',
      query: 'origin:SFO',
      rows: ['destination'],
      totals: [
        {
          aggregationType: 'Count',
        },
        {
          aggregationType: 'Average',
          field: 'delay',
        },
      ],
      rowOrder: {
        by: 'value',
        direction: 'desc',
      },
      rowLimit: 3,
      format: 'json',
    },
    result: {
      contentType: 'application/json',
      data: {
        rowFields: ['destination'],
        columnFields: [],
        measures: [
          {
            name: 'Count (Records)',
            aggregationType: 'Count',
            showAs: 'value',
          },
          {
            name: 'Average (delay)',
            aggregationType: 'Average',
            field: 'delay',
            showAs: 'value',
          },
        ],
        columns: [],
        columnQueries: [],
        rows: [
          {
            key: ['LAX'],
            query: 'destination:=LAX',
            cells: [],
            total: [41, 17.0731707317],
          },
          {
            key: ['SEA'],
            query: 'destination:=SEA',
            cells: [],
            total: [24, 7.625],
          },
          {
            key: ['JFK'],
            query: 'destination:=JFK',
            cells: [],
            total: [23, -4],
          },
        ],
        columnTotals: [],
        grandTotal: [388, 8.60051546392],
        rowsOmitted: 43,
        columnsOmitted: 0,
        rowsFilteredOut: 0,
        columnsFilteredOut: 0,
      },
      rowCount: 3,
      columnCount: 1,
    },
  },
  'REPORTS.FIND': {
    name: 'reports named like "SFO"',
    params: {
      search: 'SFO',
      limit: 1,
    },
    result: {
      reports: [
        {
          guid: 'a33f9147-00bc-4fdb-aa95-f26317357e96',
          name: 'SFO: top destinations',
          description: '',
          type: 'crosstab',
          index: 'flights',
          owner: 'analyst',
          folder: '',
          shared: false,
          createdAt: '2026-11-23T01:56:36.396Z',
          updatedAt: '2026-11-23T01:56:36.396Z',
        },
      ],
      nextCursor: null,
    },
  },
  'REPORTS.METADATA': {
    name: 'a saved crosstab',
    params: {
      guid: 'a33f9147-00bc-4fdb-aa95-f26317357e96',
    },
    result: {
      guid: 'a33f9147-00bc-4fdb-aa95-f26317357e96',
      name: 'SFO: top destinations',
      description: '',
      type: 'crosstab',
      index: 'flights',
      owner: 'analyst',
      folder: '',
      shared: false,
      createdAt: '2026-11-23T01:56:36.396Z',
      updatedAt: '2026-11-23T01:56:36.396Z',
      method: 'CROSSTAB.EXECUTE',
      params: {
        index: 'flights',
        query: 'origin:SFO',
        rows: ['destination'],
        columns: [],
        totals: [
          {
            aggregationType: 'Count',
          },
          {
            aggregationType: 'Average',
            field: 'delay',
          },
        ],
        rowOrder: {
          by: 'value',
          measure: 0,
          direction: 'desc',
        },
        rowLimit: 3,
        format: 'json',
      },
    },
  },
};
