import { QuarryClient } from '@quarry/client';
import { app } from './app-state';
import {
  crosstabChartTypes,
  crosstabPanel,
  openCrosstab,
  refreshCrosstabFields,
  startCrosstab,
} from './crosstab/crosstab.panel';
import { disposeChart } from './crosstab/chart-view';
import { byId, on } from './dom';
import { resetSources, sourcesPanel } from './data-sources';
import { dataPanel, startData } from './data.panel';
import { indexesPanel, loadIndexes, showWelcome } from './indexes.panel';
import type { Panel } from './panel';
import { reportsPanel, startReports } from './reports.panel';
import { resetSchedules, schedulesPanel, startSchedules } from './schedules.panel';
import { openSearch, runSearch, searchPanel, startSearch } from './search.panel';
import { beginSignIn, finishSignIn, signInConfig } from './sign-in';
import { selectTab, startTabs } from './tabs';

/*
 * The console: every action is one JSON-RPC call through @quarry/client, shown as curl; each tab is a
 * panel module with its own status, error and result (panel.ts). A new panel is a tab button and a
 * section in index.html, a module that makes a Panel, and one start call here.
 */

const TOKEN_KEY = 'quarry.console.token';
const PANELS: Panel[] = [
  indexesPanel,
  searchPanel,
  crosstabPanel,
  reportsPanel,
  schedulesPanel,
  dataPanel,
  sourcesPanel,
];

/** What a card's Search and Crosstab buttons do. */
const indexActions = {
  search: (index: string) => {
    byId<HTMLSelectElement>('search-index').value = index;
    selectTab('search');
    runSearch(1);
  },
  crosstab: (index: string) => {
    byId<HTMLSelectElement>('ct-index').value = index;
    byId<HTMLSelectElement>('ct-index').dispatchEvent(new Event('change'));
    selectTab('crosstab');
    byId('ct-rows-add').focus();
  },
};

async function connect(token: string): Promise<void> {
  app.client = new QuarryClient({ url: location.origin, token });
  app.token = token;
  for (const p of PANELS) p.reset();
  resetSchedules();
  resetSources();
  disposeChart();
  indexesPanel.status('Connecting…');
  const ok = await loadIndexes(indexActions);
  refreshCrosstabFields();
  showWelcome(!ok);
  await showWhoami(ok);
  // Kept for this tab only once the server took it; a refused token is not retried on reload.
  if (ok) sessionStorage.setItem(TOKEN_KEY, token);
  else {
    sessionStorage.removeItem(TOKEN_KEY);
    app.client = undefined;
    app.token = undefined;
  }
}

/** "Signed in as …" beside the token: whose reports the tabs show, and what the token may do. */
async function showWhoami(connected: boolean): Promise<void> {
  const el = byId('whoami');
  el.hidden = true;
  el.replaceChildren();
  if (!connected || !app.client) return;
  try {
    const me = await app.client.tokens.whoami();
    const name = document.createElement('strong');
    name.textContent = me.user;
    const reads = me.admin || me.indexes.includes('*') ? 'every index' : me.indexes.join(', ') || 'no index';
    el.append('Signed in as ', name, ` · reads ${reads} · ${me.scopes.join(', ')}`);
    el.title = me.token.expiresAt ? `This token expires ${me.token.expiresAt}` : 'This token does not expire';
    el.hidden = false;
  } catch {
    // A server older than TOKENS.WHOAMI: the console works without the line.
  }
}

async function loadChartTypes(): Promise<void> {
  // The server's own list, from its OpenRPC document (no token needed).
  try {
    const doc = (await new QuarryClient({ url: location.origin }).discover()) as {
      methods?: Array<{ name: string; params: Array<{ name: string; schema: { examples?: unknown } }> }>;
    };
    const param = doc.methods?.find((m) => m.name === 'CROSSTAB.EXECUTE')?.params.find((p) => p.name === 'chartType');
    app.chartTypes = Array.isArray(param?.schema.examples)
      ? param.schema.examples.filter((x): x is string => typeof x === 'string')
      : [];
    crosstabChartTypes(app.chartTypes);
  } catch (err) {
    crosstabPanel.fail(err);
  }
}

function start(): void {
  startTabs();
  startSearch();
  startCrosstab();
  startSchedules();
  startReports({
    search: async (params) => {
      selectTab('search');
      await openSearch(params);
    },
    crosstab: async (params) => {
      selectTab('crosstab');
      await openCrosstab(params);
    },
  });
  on('token-form', 'submit', (e) => {
    e.preventDefault();
    const token = byId<HTMLInputElement>('token').value.trim();
    if (token) void connect(token);
  });
  startData(async () => {
    await loadIndexes(indexActions);
    refreshCrosstabFields();
  });
  on('forget', 'click', () => {
    sessionStorage.removeItem(TOKEN_KEY);
    app.client = undefined;
    app.token = undefined;
    app.indexes = [];
    byId<HTMLInputElement>('token').value = '';
    for (const p of PANELS) p.reset();
    resetSchedules();
    resetSources();
    disposeChart();
    byId('index-list').replaceChildren();
    void showWhoami(false);
    showWelcome(true);
    indexesPanel.status('Token forgotten.');
  });
  on('copy-curl', 'click', () => void navigator.clipboard?.writeText(byId('curl').textContent ?? ''));
  void loadChartTypes();
  void resume();
}

/** A sign-in coming back from the provider, else the token this tab had, else the welcome. */
async function resume(): Promise<void> {
  const cfg = await signInConfig();
  if (cfg) {
    const button = byId<HTMLButtonElement>('sign-in');
    button.hidden = false;
    button.title = `Sign in at ${cfg.issuer}`;
    button.addEventListener('click', () => {
      beginSignIn(cfg).catch((err: unknown) => indexesPanel.fail(err));
    });
    try {
      const token = await finishSignIn(cfg);
      if (token) {
        byId<HTMLInputElement>('token').value = token;
        return connect(token);
      }
    } catch (err) {
      indexesPanel.fail(err);
    }
  }
  const saved = sessionStorage.getItem(TOKEN_KEY);
  if (saved) {
    byId<HTMLInputElement>('token').value = saved;
    await connect(saved);
  } else showWelcome(true);
}

start();
