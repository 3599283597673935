// Where the built page lives, for the gateway to serve (`npm run build` writes it).
const path = require('node:path');
module.exports = { consoleDir: path.join(__dirname, 'dist') };
