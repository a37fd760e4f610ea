module.exports = require('./dist/container/index.js');
