import { silentLogger } from '@quarry/logger';
import { LIVENESS_SERVICE } from '@quarry/rpc';
import { observeWarming, WARM_BEFORE_READY } from '@quarry/testkit';
import { createCrosstabModule } from '../module';

/**
 * A crosstab process is ready (gRPC health, and /readyz, which asks the same
 * readiness) only once the indexes it serves are open, so a rolling update never routes a first
 * crosstab to a process still opening them. Opening is held here at the catalog's listing; liveness
 * stays SERVING, as a process still opening its indexes must not be restarted.
 */
describe('crosstab readiness waits for the published indexes to be open', () => {
  it('is NOT_SERVING while they open and SERVING once every one is open', async () => {
    const seen = await observeWarming('quarry.v1.CrosstabService', LIVENESS_SERVICE, (deps) =>
      createCrosstabModule({ listenAddr: '127.0.0.1:0', graceMs: 1000, tableThreads: 0 }, silentLogger(), deps),
    );
    expect(seen).toEqual(WARM_BEFORE_READY);
  }, 60000);
});
