// Lets `tsc --noEmit` type-check stylesheet imports before Next has generated next-env.d.ts.
declare module '*.css';
