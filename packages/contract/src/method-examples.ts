// Written by tests/openrpc.test.ts (QUARRY_UPDATE_EXAMPLES=1) from real calls on the data `npm start` serves
// (scripts/sample-data.sh); that test fails when a call no longer answers what is written here.
import type { MethodName } from './methods';

export interface MethodExample {
  name: string;
  params: Record<string, unknown>;
  /** result.data */
  result: unknown;
  /** result.meta, the call made with `X-Request-Id: example` */
  meta: { requestId: string; cache?: string };
}

export const METHOD_EXAMPLES: Record<MethodName, MethodExample> = {
  'QUERIES.EXECUTE': {
    name: 'the two Star Wars films that grossed most worldwide',
    params: {
      index: 'movies',
      query: 'Title:"Star Wars"',
      pageSize: 2,
      sort: [
        {
          field: 'Worldwide Gross',
          direction: 'desc',
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
          Title: 'Star Wars Ep. I: The Phantom Menace',
          'US Gross': 431088297,
          'Worldwide Gross': 924288297,
          'US DVD Sales': null,
          'Production Budget': 115000000,
          'Release Date': '1999-05-19',
          'MPAA Rating': 'PG',
          'Running Time min': 133,
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
          Title: 'Star Wars Ep. III: Revenge of the Sith',
          'US Gross': 380270577,
          'Worldwide Gross': 848998877,
          'US DVD Sales': null,
          'Production Budget': 115000000,
          'Release Date': '2005-05-19',
          'MPAA Rating': 'PG-13',
          'Running Time min': 140,
          Distributor: '20th Century Fox',
          Source: 'Original Screenplay',
          'Major Genre': 'Adventure',
          'Creative Type': 'Science Fiction',
          Director: 'George Lucas',
          'Rotten Tomatoes Rating': null,
          'IMDB Rating': null,
          'IMDB Votes': null,
        },
      ],
    },
    meta: {
      requestId: 'example',
      cache: 'miss',
    },
  },
  'INDEXES.FIND': {
    name: 'the airports index',
    params: {
      searchText: 'airports',
      limit: 1,
    },
    result: {
      indexes: [
        {
          name: 'airports',
          description: 'US airports with their city, state and location',
          recordCount: 3376,
          fields: [
            {
              name: 'iata',
              type: 'string',
            },
            {
              name: 'name',
              type: 'string',
            },
            {
              name: 'city',
              type: 'string',
            },
            {
              name: 'state',
              type: 'string',
            },
            {
              name: 'country',
              type: 'string',
            },
            {
              name: 'latitude',
              type: 'number',
            },
            {
              name: 'longitude',
              type: 'number',
            },
          ],
          dynamicViews: ['Records', 'States'],
          updatedAt: '2026-11-25T07:51:07.807Z',
        },
      ],
      nextCursor: null,
    },
    meta: {
      requestId: 'example',
    },
  },
  'CROSSTAB.EXECUTE': {
    name: 'dramas per MPAA rating, top 3, as JSON',
    params: {
      index: 'movies',
      query: '(Major Genre):Drama AND (MPAA Rating):*',
      rows: ['MPAA Rating'],
      totals: [
        {
          aggregationType: 'Count',
        },
        {
          aggregationType: 'Average',
          field: 'IMDB Rating',
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
        rowFields: ['MPAA Rating'],
        columnFields: [],
        measures: [
          {
            name: 'Count (Records)',
            aggregationType: 'Count',
            showAs: 'value',
          },
          {
            name: 'Average (IMDB Rating)',
            aggregationType: 'Average',
            field: 'IMDB Rating',
            showAs: 'value',
          },
        ],
        columns: [],
        columnQueries: [],
        rows: [
          {
            key: ['R'],
            query: 'MPAA\\ Rating:=R',
            cells: [],
            total: [386, 6.89608938547],
          },
          {
            key: ['PG-13'],
            query: 'MPAA\\ Rating:=PG\\-13',
            cells: [],
            total: [201, 6.53664921466],
          },
          {
            key: ['PG'],
            query: 'MPAA\\ Rating:=PG',
            cells: [],
            total: [75, 6.50428571429],
          },
        ],
        columnTotals: [],
        grandTotal: [708, 6.73842662632],
        rowsOmitted: 4,
        columnsOmitted: 0,
        rowsFilteredOut: 0,
        columnsFilteredOut: 0,
      },
      rowCount: 3,
      columnCount: 1,
    },
    meta: {
      requestId: 'example',
      cache: 'miss',
    },
  },
  'REPORTS.FIND': {
    name: 'reports about dramas',
    params: {
      search: 'dramas',
      limit: 1,
    },
    result: {
      reports: [
        {
          guid: '5a3e1c2b-7d4f-4e8a-9b6c-0d1e2f3a4b5c',
          name: 'Dramas by MPAA rating',
          description: 'How many dramas each MPAA rating has, and their average IMDB rating',
          type: 'crosstab',
          index: 'movies',
          owner: 'demo',
          folder: 'samples',
          shared: true,
          createdAt: '2026-01-05T09:00:00.000Z',
          updatedAt: '2026-01-05T09:00:00.000Z',
        },
      ],
      nextCursor: null,
    },
    meta: {
      requestId: 'example',
    },
  },
  'REPORTS.METADATA': {
    name: 'the sample report npm start saves',
    params: {
      guid: '5a3e1c2b-7d4f-4e8a-9b6c-0d1e2f3a4b5c',
    },
    result: {
      guid: '5a3e1c2b-7d4f-4e8a-9b6c-0d1e2f3a4b5c',
      name: 'Dramas by MPAA rating',
      description: 'How many dramas each MPAA rating has, and their average IMDB rating',
      type: 'crosstab',
      index: 'movies',
      owner: 'demo',
      folder: 'samples',
      shared: true,
      createdAt: '2026-01-05T09:00:00.000Z',
      updatedAt: '2026-01-05T09:00:00.000Z',
      method: 'CROSSTAB.EXECUTE',
      params: {
        index: 'movies',
        query: '(Major Genre):Drama AND (MPAA Rating):*',
        rows: ['MPAA Rating'],
        columns: [],
        totals: [
          {
            aggregationType: 'Count',
          },
          {
            aggregationType: 'Average',
            field: 'IMDB Rating',
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
      version: 1,
      versions: [
        {
          version: 1,
          savedAt: '2026-01-05T09:00:00.000Z',
          indexVersion: 0,
        },
      ],
      indexVersion: 0,
    },
    meta: {
      requestId: 'example',
    },
  },
  'REPORTS.EXECUTE': {
    name: 'the sample report run as the caller, as a CSV table',
    params: {
      guid: '5a3e1c2b-7d4f-4e8a-9b6c-0d1e2f3a4b5c',
      format: 'csv',
    },
    result: {
      contentType: 'text/csv',
      data: 'MPAA Rating,Total | Count (Records),Total | Average (IMDB Rating)\r\nR,386,6.89608938547\r\nPG-13,201,6.53664921466\r\nPG,75,6.50428571429\r\nTotal,708,6.73842662632\r\n',
      rowCount: 3,
      columnCount: 1,
      rowsOmitted: 4,
      columnsOmitted: 0,
      report: {
        guid: '5a3e1c2b-7d4f-4e8a-9b6c-0d1e2f3a4b5c',
        version: 1,
      },
      indexVersion: 1,
    },
    meta: {
      requestId: 'example',
      cache: 'miss',
    },
  },
  'REPORTS.UPDATE': {
    name: 'file and share the sample report (no new version: its params stay)',
    params: {
      guid: '5a3e1c2b-7d4f-4e8a-9b6c-0d1e2f3a4b5c',
      folder: 'samples',
      shared: true,
    },
    result: {
      guid: '5a3e1c2b-7d4f-4e8a-9b6c-0d1e2f3a4b5c',
      name: 'Dramas by MPAA rating',
      description: 'How many dramas each MPAA rating has, and their average IMDB rating',
      type: 'crosstab',
      index: 'movies',
      owner: 'demo',
      folder: 'samples',
      shared: true,
      createdAt: '2026-01-05T09:00:00.000Z',
      updatedAt: '2026-11-25T09:41:07.782Z',
      method: 'CROSSTAB.EXECUTE',
      params: {
        index: 'movies',
        query: '(Major Genre):Drama AND (MPAA Rating):*',
        rows: ['MPAA Rating'],
        columns: [],
        totals: [
          {
            aggregationType: 'Count',
          },
          {
            aggregationType: 'Average',
            field: 'IMDB Rating',
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
      version: 1,
      versions: [
        {
          version: 1,
          savedAt: '2026-01-05T09:00:00.000Z',
          indexVersion: 0,
        },
      ],
      indexVersion: 0,
    },
    meta: {
      requestId: 'example',
    },
  },
  'REPORTS.DELETE': {
    name: 'move the second sample report into the trash',
    params: {
      guid: '7c9d2e4f-1a3b-4c5d-8e6f-0a1b2c3d4e5f',
    },
    result: {
      guid: '7c9d2e4f-1a3b-4c5d-8e6f-0a1b2c3d4e5f',
      restorableUntil: '2026-12-25T09:41:07.789Z',
    },
    meta: {
      requestId: 'example',
    },
  },
};
