import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * The examples of docs/integrations.md compile against the adapters as they are: each ```ts block,
 * with `client` and `model` declared, is type-checked strictly, its `agent-memory/…` imports
 * resolved to the sources. A renamed option or a changed signature fails here, not in a reader's editor.
 */
function examples(): string[] {
  const doc = readFileSync(join(ROOT, 'docs/integrations.md'), 'utf8');
  return [...doc.matchAll(/^```ts\n([\s\S]*?)^```$/gmu)].map((m) => m[1] ?? '');
}

/** What the examples take as given: the typed client, and a model of the framework they use. */
function prelude(example: string): string {
  const lines = ["declare const client: import('agent-memory/client').AgentMemoryClient;"];
  if (example.includes("from 'ai'")) lines.push("declare const model: Exclude<import('ai').LanguageModel, string>;");
  else if (example.includes('@langchain/')) {
    lines.push("declare const model: import('@langchain/core/language_models/chat_models').BaseChatModel;");
  }
  return `${lines.join('\n')}\n`;
}

describe('the examples of docs/integrations.md', () => {
  it('type-check against the adapters', () => {
    const blocks = examples();
    expect(blocks).toHaveLength(4);
    const files = new Map(blocks.map((code, i) => [join(ROOT, 'docs', `example-${i}.ts`), `${prelude(code)}${code}`]));
    const options: ts.CompilerOptions = {
      target: ts.ScriptTarget.ES2022,
      lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'],
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      types: ['node'],
      baseUrl: ROOT,
      paths: {
        'agent-memory/client': ['src/client/index.ts'],
        'agent-memory/*': ['src/adapters/*/index.ts'],
      },
    };
    // The examples are files of docs/ that exist only here: resolution from there finds node_modules.
    const disk = ts.createCompilerHost(options);
    const host: ts.CompilerHost = {
      ...disk,
      fileExists: (name) => files.has(name) || disk.fileExists(name),
      readFile: (name) => files.get(name) ?? disk.readFile(name),
      getSourceFile: (name, language, ...rest) => {
        const text = files.get(name);
        return text === undefined
          ? disk.getSourceFile(name, language, ...rest)
          : ts.createSourceFile(name, text, language);
      },
    };
    const program = ts.createProgram([...files.keys()], options, host);
    const problems = ts
      .getPreEmitDiagnostics(program)
      // The examples' own problems, and the program's (a file not found, an option refused).
      .filter((d) => !d.file || files.has(d.file.fileName))
      .map((d) => {
        if (!d.file) return ts.flattenDiagnosticMessageText(d.messageText, '\n');
        const at = d.file.getLineAndCharacterOfPosition(d.start ?? 0);
        return `${d.file.fileName.replace(ROOT, '')}:${at.line + 1}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
      });
    for (const name of files.keys()) expect(program.getSourceFile(name), name).toBeDefined();
    expect(problems).toEqual([]);
  });
});
