module.exports = require('./dist/harness/index.js');
