import { GenericContainer, Wait, type StartedTestContainer } from 'testcontainers';
import { describeWithDocker } from '@quarry/testkit';
import { pivotCompareConformance } from '../pivot-compare.conformance';
import { pivotEngineConformance } from '../pivot-engine.conformance';
import { onServer } from '../../../test-support/clickhouse-server-engine';
import { ChdbRunner } from './chdb-runner';
import { keyEstimateConformance } from './clickhouse-estimate.conformance';
import { ClickHousePivotEngine } from './clickhouse-pivot-engine.adapter';

// chDB is installed by the test command (scripts/test.sh) under .engines/chdb; ClickHouse's own engine in this process.
const inProcess = async (dir: string) => {
  const engine = new ClickHousePivotEngine(new ChdbRunner(dir));
  return { pivots: engine, close: () => engine.close() };
};
pivotEngineConformance('ClickHousePivotEngine (chDB in-process)', inProcess);
pivotCompareConformance('ClickHousePivotEngine (chDB in-process)', inProcess);
keyEstimateConformance('ClickHousePivotEngine (chDB in-process)', inProcess);

describeWithDocker('ClickHousePivotEngine on a server (testcontainers clickhouse/clickhouse-server)', () => {
  let container: StartedTestContainer;
  beforeAll(async () => {
    container = await new GenericContainer('clickhouse/clickhouse-server:25.8')
      .withExposedPorts(8123)
      .withEnvironment({ CLICKHOUSE_DB: 'quarry', CLICKHOUSE_USER: 'quarry', CLICKHOUSE_PASSWORD: 'quarry' })
      .withWaitStrategy(Wait.forHttp('/ping', 8123))
      .start();
  }, 180000);
  afterAll(async () => {
    await container?.stop();
  });

  const server = onServer(
    () => `http://quarry:quarry@${container.getHost()}:${container.getMappedPort(8123)}`,
    'quarry',
  );
  pivotEngineConformance('ClickHousePivotEngine (@clickhouse/client)', server);
  pivotCompareConformance('ClickHousePivotEngine (@clickhouse/client)', server);
  keyEstimateConformance('ClickHousePivotEngine (@clickhouse/client)', server);
});
