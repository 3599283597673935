#!/usr/bin/env node
// Writes the settings tables of docs/configuration.md from packages/config, where each setting is declared
// with its rule, default, readers and meaning: the page cannot document a setting the server does not read,
// or miss one it does. `npm run gen:config-docs` (after building packages/config); tests/docs.test.ts fails
// when the page is stale.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { settingsTables } = require('@quarry/config');

const OUT = path.join(__dirname, '..', 'docs', 'configuration.md');
const START =
  '<!-- settings: written by npm run gen:config-docs from packages/config/src/settings; edit them there -->';
const END = '<!-- /settings -->';

/**
 * Markdown as Prettier lays it out in the page (its tables aligned). Prettier runs as its own process:
 * its API loads its plugins with import(), which jest's CommonJS sandbox cannot run.
 */
function prettierMarkdown(text) {
  const bin = path.join(path.dirname(require.resolve('prettier/package.json')), 'bin', 'prettier.cjs');
  return execFileSync(process.execPath, [bin, '--stdin-filepath', OUT], { input: text, encoding: 'utf8' });
}

/** docs/configuration.md's text with its settings tables as the config package declares them today. */
function renderConfigDocs(text = fs.readFileSync(OUT, 'utf8')) {
  const from = text.indexOf(START);
  const to = text.indexOf(END);
  if (from < 0 || to < from)
    throw new Error(`${path.relative(process.cwd(), OUT)} lost its settings markers: ${START} … ${END}`);
  return `${text.slice(0, from)}${START}\n\n${prettierMarkdown(settingsTables())}\n${text.slice(to)}`;
}

if (require.main === module) fs.writeFileSync(OUT, renderConfigDocs());

module.exports = { renderConfigDocs, OUT };
