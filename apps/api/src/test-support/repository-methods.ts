import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

/** One public method of a repository class, as the source declares it. */
export interface RepositoryMethod {
  /** `JobsRepository.cancel` */
  name: string;
  file: string;
  /** The type of the first parameter, as written (empty when it has none). */
  firstParamType: string;
  /** Whether the first parameter is a tenant scope. */
  scoped: boolean;
}

const SRC = join(__dirname, '..');

function repositoryFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' || e.name === '__fixtures__' ? [] : repositoryFiles(p);
    return e.name.endsWith('.repository.ts') ? [p] : [];
  });
}

/** Every public method of every `*.repository.ts` class in apps/api/src. */
export function repositoryMethods(): RepositoryMethod[] {
  const out: RepositoryMethod[] = [];
  for (const file of repositoryFiles(SRC)) {
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    for (const node of source.statements) {
      if (!ts.isClassDeclaration(node) || !node.name) continue;
      for (const member of node.members) {
        if (!ts.isMethodDeclaration(member) || !member.name || !ts.isIdentifier(member.name)) continue;
        const modifiers = ts.getModifiers(member) ?? [];
        if (modifiers.some((m) => m.kind === ts.SyntaxKind.PrivateKeyword || m.kind === ts.SyntaxKind.ProtectedKeyword)) continue;
        const first = member.parameters[0];
        const firstParamType = first?.type?.getText(source) ?? '';
        out.push({
          name: `${node.name.text}.${member.name.text}`,
          file: relative(SRC, file),
          firstParamType,
          scoped: /\bTenantScope\b/.test(firstParamType),
        });
      }
    }
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}
