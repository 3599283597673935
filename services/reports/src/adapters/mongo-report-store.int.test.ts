import { MongoClient } from 'mongodb';
import { GenericContainer, Wait, type StartedTestContainer } from 'testcontainers';
import { describeWithDocker } from '@quarry/testkit';
import { reportStoreConformance } from '../report-store.conformance';
import { MongoReportStore, wordFilter } from './mongo-report-store.adapter';

describeWithDocker('MongoReportStore conformance (testcontainers mongo:7)', () => {
  let container: StartedTestContainer;
  let url: string;
  let db = 0;

  beforeAll(async () => {
    container = await new GenericContainer('mongo:7')
      .withExposedPorts(27017)
      .withWaitStrategy(Wait.forLogMessage(/Waiting for connections/))
      .start();
    url = `mongodb://${container.getHost()}:${container.getMappedPort(27017)}`;
  }, 180000);

  afterAll(async () => {
    await container?.stop();
  });

  reportStoreConformance(() => MongoReportStore.connect(url, `reports_${process.pid}_${db++}`));

  // A word is looked up in the index of the words, never by a collection scan.
  describe('word search', () => {
    const stages = (plan: unknown): string[] => {
      if (typeof plan !== 'object' || plan === null) return [];
      const p = plan as { stage?: string; inputStage?: unknown; inputStages?: unknown[]; indexName?: string };
      return [
        ...(p.stage ? [`${p.stage}${p.indexName ? `:${p.indexName}` : ''}`] : []),
        ...stages(p.inputStage),
        ...(p.inputStages ?? []).flatMap(stages),
      ];
    };

    it('scans the searchWords index for a word, and upgrades reports saved with the former field', async () => {
      const name = `reports_${process.pid}_words`;
      const client = await MongoClient.connect(url);
      try {
        const reports = client.db(name).collection('reports');
        // A report as the former adapter saved it: one searchText string, no searchWords.
        await reports.insertOne({
          _id: 'old-report' as never,
          ownerId: 'u1',
          ownerName: 'ann',
          name: 'Legacy portfolio',
          nameKey: 'legacy portfolio',
          description: '',
          folder: '',
          shared: false,
          type: 'query',
          index: 'movies',
          method: 'QUERIES.EXECUTE',
          params: '{}',
          seq: 1,
          createdAt: '',
          updatedAt: '',
          searchText: ' legacy portfolio ',
        });
        const store = await MongoReportStore.connect(url, name);
        try {
          const found = await store.find({
            viewerId: undefined,
            words: ['portf'],
            types: [],
            beforeSeq: undefined,
            limit: 5,
          });
          expect(found.map((r) => r.guid)).toEqual(['old-report']);
          expect(await reports.findOne({ _id: 'old-report' as never })).toMatchObject({
            searchWords: ['legacy', 'portfolio'],
          });
          const explained = (await reports.find(wordFilter('portf') as never).explain('queryPlanner')) as {
            queryPlanner: { winningPlan: unknown };
          };
          const plan = stages(explained.queryPlanner.winningPlan);
          expect(plan).toContain('IXSCAN:searchWords_1');
          expect(plan).not.toContain('COLLSCAN');
        } finally {
          await store.close();
        }
      } finally {
        await client.close();
      }
    });
  });
});
