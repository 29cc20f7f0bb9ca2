import { randomInt } from 'node:crypto'
import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import lockfile from 'proper-lockfile'
import { errorCodes } from '../../errors/codes.js'

/** The folder of a profiler folder that holds its writers' slot locks. */
const WRITERS = 'writers'
/** Slots of a folder: a token's first two hex characters. */
const SLOTS = 256
const TOKENS_PER_SLOT = 0x10000
const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'))

export interface WriterSlotTimings {
  /** a slot lock not refreshed for this long is a crashed writer's, and may be taken (default 10 s; at least 2 s) */
  staleMs?: number
  /** how often a writer refreshes its slots' locks (default half of staleMs) */
  updateMs?: number
}

function lockOptions (directory: string, slot: string, staleMs: number): { lockfilePath: string, realpath: false, stale: number } {
  return { lockfilePath: join(directory, WRITERS, `${slot}.lock`), realpath: false, stale: staleMs }
}

function staleOf (timings: WriterSlotTimings): number {
  return Math.max(2000, timings.staleMs ?? 10_000)
}

/**
 * The writer slots a process holds in a profiler folder. Many processes write one folder at
 * once; each holds a slot (one of 256) while it writes: the tokens it hands out begin with its
 * slot's two hex characters, so that no two processes ever hand out the same token, with no
 * call to anyone when a unit begins; and its segments are named after its first slot, so that
 * each segment has one writer. A slot is proper-lockfile's lock (an atomic `mkdir`, its mtime
 * refreshed while its holder lives): a writer killed with SIGKILL leaves its lock, stale after
 * `staleMs`, and its slot is free again then. A process holds more slots when its profiles need
 * more tokens than one slot has (65,536).
 */
export class WriterSlots {
  /** slot → its release, in the order they were taken */
  private readonly held = new Map<string, () => Promise<void>>()
  private readonly staleMs: number
  private readonly updateMs: number
  /** the slots held, as a list: what token draws read */
  list: readonly string[] = []

  constructor (private readonly directory: string, timings: WriterSlotTimings, private readonly lost: (slot: string, error: Error) => void) {
    this.staleMs = staleOf(timings)
    this.updateMs = Math.min(timings.updateMs ?? this.staleMs / 2, this.staleMs / 2)
  }

  /** the slot that names this writer's segments (its first); undefined while it holds none */
  get primary (): string | undefined {
    return this.list[0]
  }

  /**
   * Takes one more slot, free or left stale by a crashed writer, tried from a random one on;
   * KERNEL_PROFILER_FOLDER_IN_USE when all 256 are held.
   */
  async claim (): Promise<string> {
    await mkdir(join(this.directory, WRITERS), { recursive: true })
    const start = randomInt(SLOTS)
    for (let i = 0; i < SLOTS; i++) {
      const slot = HEX[(start + i) % SLOTS]!
      if (this.held.has(slot)) continue
      try {
        const release = await lockfile.lock(join(this.directory, WRITERS, slot), {
          ...lockOptions(this.directory, slot, this.staleMs),
          update: this.updateMs,
          retries: 0,
          onCompromised: (error) => {
            // its lock was removed or taken over (the folder deleted, the process stopped longer than staleMs)
            if (!this.held.delete(slot)) return
            this.list = [...this.held.keys()]
            this.lost(slot, error)
          }
        })
        this.held.set(slot, release)
        this.list = [...this.held.keys()]
        return slot
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ELOCKED') throw error
      }
    }
    throw new errorCodes.KERNEL_PROFILER_FOLDER_IN_USE(SLOTS)
  }

  /** Gives every slot back: another process may take them (its tokens skip those still stored). */
  async release (): Promise<void> {
    const releases = [...this.held.values()]
    this.held.clear()
    this.list = []
    await Promise.all(releases.map(async (release) => { await release().catch(() => undefined) }))
  }

  /** Whether a live process holds `slot` of the folder (a crashed holder's lock is stale). */
  static async isHeld (directory: string, slot: string, timings: WriterSlotTimings = {}): Promise<boolean> {
    try {
      return await lockfile.check(join(directory, WRITERS, slot), lockOptions(directory, slot, staleOf(timings)))
    } catch {
      return false
    }
  }
}

/**
 * The tokens of a writer: a sequence through its slots' 65,536 tokens each, from a random start,
 * skipping those the folder stores (a profile of an earlier holder of the slot, or of a turn
 * of the sequence before). A token is handed out again only after every other token of the
 * writer's slots was.
 */
export class SlotTokens {
  private next = randomInt(TOKENS_PER_SLOT)
  private slot = 0

  constructor (private readonly slots: WriterSlots) {}

  /** undefined while the writer holds no slot (it was lost, and is being taken again), or all its tokens are stored */
  reserve (stored: (token: string) => boolean): string | undefined {
    const slots = this.slots.list
    for (let tries = slots.length * TOKENS_PER_SLOT; tries > 0; tries--) {
      if (this.slot >= slots.length) this.slot = 0
      const n = this.next
      const token = slots[this.slot]! + HEX[n >>> 8]! + HEX[n & 255]!
      this.next = (n + 1) % TOKENS_PER_SLOT
      if (this.next === 0) this.slot++
      if (!stored(token)) return token
    }
    return undefined
  }

  /** How many tokens the writer's slots hold: beyond half of it stored, it takes another slot. */
  get capacity (): number {
    return this.slots.list.length * TOKENS_PER_SLOT
  }
}

/** A file storage of this process writing the folder: told when a slot is lost. */
export type SlotLoss = (slot: string, error: Error) => void

/**
 * What the file storages of one process share for one folder: its writer slots, its tokens'
 * sequence, the numbers of its segments and which of them are being written. A process is one
 * writer of a folder however many apps it builds (a test file builds dozens): it holds one
 * slot, given back when its last storage on the folder closes.
 */
export class FolderWriter {
  readonly slots: WriterSlots
  readonly tokens: SlotTokens
  /** segments a storage of this process is appending to now */
  readonly open = new Set<string>()
  private readonly losses = new Set<SlotLoss>()
  private users = 0
  private claiming: Promise<void> | undefined
  /** the next segment number of each slot, once looked up */
  private readonly numbers = new Map<string, number>()

  private constructor (readonly directory: string, timings: WriterSlotTimings) {
    this.slots = new WriterSlots(directory, timings, (slot, error) => { for (const loss of this.losses) loss(slot, error) })
    this.tokens = new SlotTokens(this.slots)
  }

  /** This process's writer of the folder (its slot taken by the first storage that joins); `loss` is told when a slot is lost. */
  static async join (directory: string, timings: WriterSlotTimings, loss: SlotLoss): Promise<FolderWriter> {
    let writer = writers.get(directory)
    if (writer === undefined) {
      writer = new FolderWriter(directory, timings)
      writers.set(directory, writer)
    }
    writer.users++
    writer.losses.add(loss)
    try {
      await writer.claim(false)
    } catch (error) {
      await writer.leave(loss)
      throw error
    }
    return writer
  }

  /** A storage closes: the last one on the folder gives its slots back. */
  async leave (loss: SlotLoss): Promise<void> {
    this.losses.delete(loss)
    if (--this.users > 0) return
    if (writers.get(this.directory) === this) writers.delete(this.directory)
    await this.claiming?.catch(() => undefined)
    await this.slots.release()
  }

  /** Takes a slot (one claim at a time): the first, or again after it was lost; `more`: one more, for more tokens. */
  async claim (more: boolean): Promise<void> {
    if (!more && this.slots.primary !== undefined) return
    this.claiming ??= this.slots.claim().then(() => undefined).finally(() => { this.claiming = undefined })
    await this.claiming
  }

  /** The folder was deleted (its slot locks with it): the slots are let go, and taken again by the next write. */
  async lost (): Promise<void> {
    await this.slots.release()
    this.numbers.clear()
  }

  /** The number of this process's next segment of `slot`, on from the highest on disk (`highest`, looked up once). */
  async nextSegment (slot: string, highest: () => Promise<number>): Promise<number> {
    let next = this.numbers.get(slot)
    if (next === undefined) next = 1 + await highest()
    this.numbers.set(slot, Math.max(next + 1, this.numbers.get(slot) ?? 0))
    return next
  }
}

/** Each folder's writer in this process. */
const writers = new Map<string, FolderWriter>()
