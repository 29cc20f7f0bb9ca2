/**
 * What the toolbar's and the pages' browser tests check in a page: axe-core's violations, the
 * toolbar's items and their boxes (in its shadow root), console problems, and screenshots the
 * docs show.
 */
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join, resolve } from 'node:path'
import type { Page } from 'playwright-core'

export const artifacts = resolve(import.meta.dirname, '../artifacts')
const docsImages = resolve(import.meta.dirname, '../../docs/images')

/**
 * A screenshot in test/artifacts; with UPDATE_README_IMAGES=1 also copied to docs/images under
 * `docsName` (the images docs/profiler.md shows).
 */
export async function shoot (page: Page, name: string, options: { docsName?: string, fullPage?: boolean, clip?: { x: number, y: number, width: number, height: number } } = {}): Promise<void> {
  mkdirSync(artifacts, { recursive: true })
  const path = join(artifacts, name)
  await page.screenshot(options.clip === undefined ? { path, fullPage: options.fullPage === true } : { path, clip: options.clip })
  if (options.docsName !== undefined && process.env.UPDATE_README_IMAGES === '1') {
    mkdirSync(docsImages, { recursive: true })
    copyFileSync(path, join(docsImages, options.docsName))
  }
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')

export interface AxeViolation {
  id: string
  impact: string | null
  nodes: number
  targets: string[]
}

/**
 * axe-core run on the page as it is: its script is evaluated by the test (DevTools' evaluation,
 * which the page's Content-Security-Policy does not govern), then `axe.run()` on the whole
 * document, the toolbar's open shadow root included. WCAG 2.x A and AA rules and axe's best
 * practices.
 */
export async function axe (page: Page): Promise<AxeViolation[]> {
  await page.evaluate(axeSource)
  return await page.evaluate(async () => {
    const run = (window as unknown as { axe: { run: (context: Document, options: object) => Promise<{ violations: Array<{ id: string, impact: string | null, nodes: Array<{ target: unknown[] }> }> }> } }).axe.run
    const result = await run(document, { resultTypes: ['violations'], runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'] } })
    return result.violations.map((violation) => ({ id: violation.id, impact: violation.impact, nodes: violation.nodes.length, targets: violation.nodes.slice(0, 5).map((node) => JSON.stringify(node.target)) }))
  })
}

/** The serious and critical ones, as "rule (impact): n nodes, first targets". */
export function severe (violations: readonly AxeViolation[]): string[] {
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.impact ?? '?'}): ${v.nodes} nodes, ${v.targets.join(' ')}`)
}

/** Console errors and warnings, page errors and failed requests (CSP violations are console errors). */
export function watchConsole (page: Page, ignore: (text: string) => boolean = () => false): string[] {
  const problems: string[] = []
  page.on('console', (message) => {
    if (message.type() !== 'error' && message.type() !== 'warning') return
    if (ignore(message.text())) return
    problems.push(`${message.type()}: ${message.text()} (${message.location().url})`)
  })
  page.on('pageerror', (error) => { problems.push(error.message) })
  return problems
}

export interface ToolbarItemBox {
  /** the item's data-kwdt name */
  name: string
  /** in the bar, or in the ⋯ menu */
  where: 'bar' | 'menu'
  left: number
  right: number
  top: number
  bottom: number
  visible: boolean
}

/** The toolbar's items, where each is and its box (viewport pixels). */
export async function toolbarItems (page: Page): Promise<ToolbarItemBox[]> {
  return await page.evaluate(() => {
    const shadow = document.querySelector('fastify-kernel-toolbar')!.shadowRoot!
    return Array.from(shadow.querySelectorAll('.kwdt-item')).filter((item) => !(item as HTMLElement).hidden && item.getAttribute('data-kwdt') !== 'more').map((item) => {
      const main = (item.querySelector(':scope > .kwdt-main') ?? item) as HTMLElement
      const box = main.getBoundingClientRect()
      return {
        name: item.getAttribute('data-kwdt') ?? '',
        where: item.closest('[data-kwdt-overflow]') === null ? 'bar' as const : 'menu' as const,
        left: box.left,
        right: box.right,
        top: box.top,
        bottom: box.bottom,
        visible: box.width > 0 && box.height > 0 && getComputedStyle(main).visibility === 'visible'
      }
    })
  })
}

/** A box of an element inside the toolbar's shadow root (selector relative to it), or null. */
export async function toolbarBox (page: Page, selector: string): Promise<{ left: number, right: number, top: number, bottom: number, width: number, height: number } | null> {
  return await page.evaluate((selector) => {
    const element = document.querySelector('fastify-kernel-toolbar')?.shadowRoot?.querySelector(selector)
    if (element === null || element === undefined) return null
    const box = element.getBoundingClientRect()
    return { left: box.left, right: box.right, top: box.top, bottom: box.bottom, width: box.width, height: box.height }
  }, selector)
}

/** What has the focus: inside the toolbar, its item's name (or `hide`, `show`, `more`); else the page's element's tag and id. */
export async function focused (page: Page): Promise<string> {
  return await page.evaluate(() => {
    const host = document.querySelector('fastify-kernel-toolbar')
    if (document.activeElement !== host || host === null) {
      const element = document.activeElement
      return element === null ? 'none' : `page:${element.tagName.toLowerCase()}${element.id === '' ? '' : `#${element.id}`}`
    }
    const inner = host.shadowRoot!.activeElement
    if (inner === null) return 'toolbar'
    if (inner.hasAttribute('data-kwdt-hide')) return 'hide'
    if (inner.hasAttribute('data-kwdt-show')) return 'show'
    const item = inner.closest('.kwdt-item')
    const info = item?.querySelector(':scope > .kwdt-info')
    return `${item?.getAttribute('data-kwdt') ?? '?'}${info?.contains(inner) === true ? ':info' : ''}`
  })
}
