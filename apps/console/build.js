// Bundles the console into dist/: one script, one stylesheet, one page, and ECharts; nothing from a CDN.
const fs = require('node:fs');
const path = require('node:path');
const esbuild = require('esbuild');

const out = path.join(__dirname, 'dist');
fs.rmSync(out, { recursive: true, force: true });
fs.mkdirSync(out, { recursive: true });
esbuild.buildSync({
  entryPoints: [path.join(__dirname, 'src', 'main.ts')],
  bundle: true,
  minify: true,
  sourcemap: true,
  target: ['es2020'],
  format: 'iife',
  outfile: path.join(out, 'console.js'),
  logLevel: 'warning',
});
for (const file of ['index.html', 'console.css'])
  fs.copyFileSync(path.join(__dirname, 'src', file), path.join(out, file));
// ECharts for interactive charts, from node_modules (the same package the chart workers draw with),
// served by the gateway beside the console: the page's CSP allows scripts from itself only.
fs.copyFileSync(require.resolve('echarts/dist/echarts.min.js'), path.join(out, 'echarts.min.js'));
process.stdout.write(`console built into ${path.relative(process.cwd(), out)}\n`);
