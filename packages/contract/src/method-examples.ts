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

/** Each method's examples; the first is the one a reader meets first. */
export const METHOD_EXAMPLES: Record<MethodName, MethodExample[]> = {
  'QUERIES.EXECUTE': [
    {
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
  ],
  'INDEXES.FIND': [
    {
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
            updatedAt: '2026-11-25T10:57:25.403Z',
          },
        ],
        nextCursor: null,
      },
      meta: {
        requestId: 'example',
      },
    },
  ],
  'CROSSTAB.EXECUTE': [
    {
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
    {
      name: 'films per MPAA rating as the ECharts option of a pie chart',
      params: {
        index: 'movies',
        query: '(MPAA Rating):*',
        rows: ['MPAA Rating'],
        totals: [
          {
            aggregationType: 'Count',
          },
        ],
        chartType: 'Pie2D',
        imageFormat: 'echarts',
        width: 480,
        height: 320,
      },
      result: {
        contentType: 'application/json',
        data: {
          animation: false,
          backgroundColor: '#ffffff',
          color: ['#5470c6', '#91cc75', '#fac858', '#ee6666', '#73c0de', '#3ba272'],
          title: {
            text: 'Count (Records) by MPAA Rating',
            subtext: 'movies',
            left: 'center',
            top: 10,
            itemGap: 4,
            textStyle: {
              fontSize: 16,
              fontWeight: 'bold',
              color: '#333',
            },
            subtextStyle: {
              fontSize: 12,
              color: '#666',
            },
          },
          textStyle: {
            fontFamily: 'DejaVu Sans, Liberation Sans, sans-serif',
          },
          legend: {
            type: 'plain',
            itemWidth: 18,
            itemHeight: 10,
            itemGap: 10,
            textStyle: {
              fontSize: 12,
              width: 437,
              overflow: 'truncate',
            },
            padding: 0,
            orient: 'horizontal',
            left: 10,
            bottom: 10,
            width: 460,
            data: ['G', 'Not Rated', 'PG', 'PG-13', 'R', 'Other (2 under 1.5%)'],
          },
          series: [
            {
              type: 'pie',
              name: 'Count (Records)',
              left: 10,
              top: 59,
              right: 10,
              bottom: 36,
              radius: 79,
              center: ['50%', '50%'],
              data: [
                {
                  name: 'G',
                  value: 79,
                  label: {
                    show: true,
                  },
                },
                {
                  name: 'Not Rated',
                  value: 94,
                  label: {
                    show: true,
                  },
                },
                {
                  name: 'PG',
                  value: 354,
                  label: {
                    show: true,
                  },
                },
                {
                  name: 'PG-13',
                  value: 865,
                  label: {
                    show: true,
                  },
                },
                {
                  name: 'R',
                  value: 1194,
                  label: {
                    show: true,
                  },
                },
                {
                  name: 'Other (2 under 1.5%)',
                  value: 10,
                  label: {
                    show: false,
                  },
                },
              ],
              label: {
                show: true,
                formatter: '{b}: {d}%',
                fontSize: 12,
                width: 101,
                overflow: 'truncate',
                alignTo: 'labelLine',
                edgeDistance: 4,
                bleedMargin: 4,
              },
              labelLine: {
                show: true,
                length: 8,
                length2: 8,
              },
              labelLayout: {
                hideOverlap: true,
              },
              avoidLabelOverlap: true,
            },
          ],
        },
        width: 480,
        height: 320,
        chartType: 'Pie2D',
      },
      meta: {
        requestId: 'example',
        cache: 'miss',
      },
    },
  ],
  'REPORTS.FIND': [
    {
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
  ],
  'REPORTS.METADATA': [
    {
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
  ],
  'REPORTS.EXECUTE': [
    {
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
  ],
  'REPORTS.UPDATE': [
    {
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
        updatedAt: '2026-11-25T10:57:30.557Z',
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
  ],
  'REPORTS.DELETE': [
    {
      name: 'move the second sample report into the trash',
      params: {
        guid: '7c9d2e4f-1a3b-4c5d-8e6f-0a1b2c3d4e5f',
      },
      result: {
        guid: '7c9d2e4f-1a3b-4c5d-8e6f-0a1b2c3d4e5f',
        restorableUntil: '2026-12-25T10:57:30.561Z',
      },
      meta: {
        requestId: 'example',
      },
    },
  ],
  'REPORTS.SCHEDULE': [
    {
      name: 'the sample report as CSV every Monday at 08:00 Paris time, by e-mail (needs QUARRY_SMTP_URL)',
      params: {
        guid: '5a3e1c2b-7d4f-4e8a-9b6c-0d1e2f3a4b5c',
        cron: '0 8 * * 1',
        timeZone: 'Europe/Paris',
        format: 'csv',
        deliver: {
          email: {
            to: ['analyst@example.com'],
          },
        },
      },
      result: {
        scheduleId: 'sch_3kTbq9vV1XwJp2mYdR7nQa',
        secret: null,
      },
      meta: {
        requestId: 'example',
      },
    },
    {
      name: 'the sample report as JSON every weekday at 07:30 UTC, to a signed webhook (needs QUARRY_WEBHOOK_ALLOW)',
      params: {
        guid: '5a3e1c2b-7d4f-4e8a-9b6c-0d1e2f3a4b5c',
        cron: '30 7 * * 1-5',
        timeZone: 'UTC',
        format: 'json',
        deliver: {
          webhook: {
            url: 'https://hooks.example.com/quarry',
          },
        },
      },
      result: {
        scheduleId: 'sch_8Hc2LwPq4ZsN7tVbY1kRfe',
        secret: 'whsec_q3ZJx0bq8Vd2Yw6hT1mKcN4pR7sA9uE5gL0iO3fWzXk',
      },
      meta: {
        requestId: 'example',
      },
    },
  ],
  'REPORTS.SCHEDULES': [
    {
      name: "the caller's schedules (none yet on what npm start serves)",
      params: {},
      result: {
        schedules: [],
      },
      meta: {
        requestId: 'example',
      },
    },
  ],
  'REPORTS.UNSCHEDULE': [
    {
      name: 'remove the schedule REPORTS.SCHEDULE created',
      params: {
        scheduleId: 'sch_3kTbq9vV1XwJp2mYdR7nQa',
      },
      result: {
        scheduleId: 'sch_3kTbq9vV1XwJp2mYdR7nQa',
        removed: true,
      },
      meta: {
        requestId: 'example',
      },
    },
  ],
  'TOKENS.EMBED': [
    {
      name: 'a token a browser may use for ten minutes to search dramas in movies',
      params: {
        index: 'movies',
        realm: '(Major Genre):Drama',
        ttlSeconds: 600,
      },
      result: {
        token:
          'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ0aWQiOiIwYjZmM2MxZS0yYTRkLTRjOGUtOWYxMC0xYTJiM2M0ZDVlNmYiLCJpZHgiOiJtb3ZpZXMiLCJyZWFsbSI6IihNYWpvciBHZW5yZSk6RHJhbWEiLCJpc3MiOiJxdWFycnkiLCJhdWQiOiJxdWFycnktZW1iZWQiLCJzdWIiOiI3YzllNjY3OS03NDI1LTQwZGUtOTQ0Yi1lMDdmYzFmOTBhZTciLCJqdGkiOiI5YjJmNGU4YS0xYzNkLTRlNWYtOGE3Yi02YzVkNGUzZjJhMWIiLCJpYXQiOjE3Njc2MDM2MDAsImV4cCI6MTc2NzYwNDIwMH0.adkxy-Bbban-z_akYDwiX3UjRnjrf69T1cfLgep8Ofs',
        expiresAt: '2026-01-05T09:10:00.000Z',
      },
      meta: {
        requestId: 'example',
      },
    },
  ],
};
