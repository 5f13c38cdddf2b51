export * from './types';
export { runCycle } from './first-fit';
