import { GenericContainer, Wait, type StartedTestContainer } from 'testcontainers';
import { describeWithDocker } from '@quarry/testkit';
import { reportStoreConformance } from '../report-store.conformance';
import { MongoReportStore } from './mongo-report-store.adapter';

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
});
