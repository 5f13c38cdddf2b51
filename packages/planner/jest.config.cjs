module.exports = { ...require('../../jest.preset.cjs'), roots: ['<rootDir>/src'] };
