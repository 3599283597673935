import { GenericContainer, Wait, type StartedTestContainer } from 'testcontainers';
import { describeWithDocker } from '@quarry/testkit';
import { metadataStoreConformance } from '../metadata-store.conformance';
import { MongoMetadataStore } from './mongo-metadata-store.adapter';

describeWithDocker('MongoMetadataStore conformance (testcontainers mongo:7)', () => {
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

  // A fresh database per test gives every test the empty store the suite expects.
  metadataStoreConformance(() => MongoMetadataStore.connect(url, `conformance_${process.pid}_${db++}`));
});
