/**
 * The project's documentation as the docs tests read it: README.md and docs/*.md, parsed with
 * marked (its lexer, no rendering), with the line each code block starts on.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import GithubSlugger from 'github-slugger'
import { Lexer, marked } from 'marked'
import type { Token, Tokens } from 'marked'
import { root } from '../build-once.js'

/** Every documentation file, relative to the repository's root. */
export function docFiles (): string[] {
  return ['README.md', ...readdirSync(join(root, 'docs')).filter((name) => name.endsWith('.md')).sort().map((name) => `docs/${name}`)]
}

export interface CodeBlock {
  file: string
  /** 1-based line of the opening fence in the file (0 when it cannot be placed: nested in a list) */
  line: number
  /** the fence's language, the first word of its info string; undefined without one */
  lang: string | undefined
  text: string
  /** the block as written, to rewrite it in place */
  raw: string
}

function tokensOf (file: string): { source: string, tokens: Token[] } {
  const source = readFileSync(join(root, file), 'utf8')
  return { source, tokens: Lexer.lex(source) }
}

function each (tokens: Token[], visit: (token: Token) => void): void {
  marked.walkTokens(tokens, visit)
}

export function codeBlocks (file: string): CodeBlock[] {
  const { source, tokens } = tokensOf(file)
  const blocks: CodeBlock[] = []
  let from = 0
  each(tokens, (token) => {
    if (token.type !== 'code') return
    const code = token as Tokens.Code
    const at = source.indexOf(code.raw, from)
    if (at >= 0) from = at + code.raw.length
    blocks.push({
      file,
      line: at >= 0 ? source.slice(0, at).split('\n').length : 0,
      lang: code.codeBlockStyle === 'indented' ? undefined : code.lang?.split(/\s/)[0] || undefined,
      text: code.text,
      raw: code.raw
    })
  })
  return blocks
}

/** The text of inline code spans (`like this`) of a file. */
export function codeSpans (file: string): string[] {
  const spans: string[] = []
  each(tokensOf(file).tokens, (token) => { if (token.type === 'codespan') spans.push(unescapeHtml((token as Tokens.Codespan).text)) })
  return spans
}

/** Link and image targets of a file, as written. */
export function linkTargets (file: string): string[] {
  const targets: string[] = []
  each(tokensOf(file).tokens, (token) => {
    if (token.type === 'link' || token.type === 'image') targets.push((token as Tokens.Link | Tokens.Image).href)
  })
  return targets
}

/** The anchors GitHub gives a file's headings (`## Quick start` → `quick-start`, repeats numbered). */
export function anchors (file: string): Set<string> {
  const slugger = new GithubSlugger()
  const found = new Set<string>()
  for (const token of tokensOf(file).tokens) {
    if (token.type === 'heading') found.add(slugger.slug(plainText((token as Tokens.Heading).tokens)))
  }
  return found
}

/** What a reader sees of inline markdown: code spans' text, links' text, no markup. */
function plainText (tokens: Token[]): string {
  return tokens.map((token) => {
    if ('tokens' in token && Array.isArray(token.tokens)) return plainText(token.tokens)
    return 'text' in token && typeof token.text === 'string' ? unescapeHtml(token.text) : ''
  }).join('')
}

// marked escapes code spans' text for HTML; the docs tests compare what a reader reads
function unescapeHtml (text: string): string {
  return text.replace(/&(lt|gt|quot|#39|amp);/g, (entity, name: string) => ({ lt: '<', gt: '>', quot: '"', '#39': "'", amp: '&' })[name] ?? entity)
}
