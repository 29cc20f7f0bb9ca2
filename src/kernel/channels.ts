import { tracingChannel } from 'node:diagnostics_channel'
import type { TracingChannel } from 'node:diagnostics_channel'
import type { FastifyRequest } from 'fastify'
import type { StageEventMap } from './events.js'
import type { StageName } from './stages.js'

/**
 * The tracing channel (`node:diagnostics_channel` `tracingChannel(name)`) of each stage, one per
 * stage as mysql2 has one per operation (`mysql2:query`, `mysql2:execute`): an OpenTelemetry,
 * Sentry or Datadog subscriber picks the stages it wants, and a stage nobody listens to costs
 * nothing. Each publishes `start`, `end`, `asyncStart`, `asyncEnd` and `error`
 * (`tracing:fastify-kernel:kernel.request:start` …) with a `StageMessage`.
 */
export const StageChannel = {
  REQUEST: 'fastify-kernel:kernel.request',
  CONTROLLER: 'fastify-kernel:kernel.controller',
  CONTROLLER_ARGUMENTS: 'fastify-kernel:kernel.controller_arguments',
  EXCEPTION: 'fastify-kernel:kernel.exception',
  RESPONSE: 'fastify-kernel:kernel.response',
  FINISH_REQUEST: 'fastify-kernel:kernel.finish_request',
  TERMINATE: 'fastify-kernel:kernel.terminate'
} as const

/**
 * How a stage ended: its listeners all ran (`completed`), one answered the request
 * (`responded`), stopped propagation (`stopped`), or threw or failed the stage (`threw`).
 */
export type StageOutcome = 'completed' | 'responded' | 'stopped' | 'threw'

/** What each event of a stage's tracing channel carries (the same object from `start` to `asyncEnd`). */
export interface StageMessage<S extends StageName = StageName> {
  /** `kernel.request` … `kernel.terminate` */
  readonly stage: S
  readonly request: FastifyRequest
  /** the stage's event, as its listeners get it (context, response, exception…) */
  readonly event: StageEventMap[S]
  /**
   * Set once the stage is over: at `end` when it ran synchronously; when it went on
   * asynchronously, `end` has none and `asyncStart` / `asyncEnd` follow with it.
   */
  outcome?: StageOutcome
  /** the exception a listener threw or failed the stage with (the router's 404, a denied access…) */
  error?: unknown
}

type StageTracingChannel = TracingChannel<unknown, StageMessage>

// held here for the life of the process: a subscriber's tracingChannel(name) is the same object
const REQUEST: StageTracingChannel = tracingChannel(StageChannel.REQUEST)
const CONTROLLER: StageTracingChannel = tracingChannel(StageChannel.CONTROLLER)
const CONTROLLER_ARGUMENTS: StageTracingChannel = tracingChannel(StageChannel.CONTROLLER_ARGUMENTS)
const EXCEPTION: StageTracingChannel = tracingChannel(StageChannel.EXCEPTION)
const RESPONSE: StageTracingChannel = tracingChannel(StageChannel.RESPONSE)
const FINISH_REQUEST: StageTracingChannel = tracingChannel(StageChannel.FINISH_REQUEST)
const TERMINATE: StageTracingChannel = tracingChannel(StageChannel.TERMINATE)

// a switch on the names, not a Map or an object: every dispatch asks, and this costs the least
// (measured: a Map lookup added about 30 ns to a production dispatch, this a few)
function channelOf (stage: StageName): StageTracingChannel {
  switch (stage) {
    case 'kernel.request': return REQUEST
    case 'kernel.controller': return CONTROLLER
    case 'kernel.controller_arguments': return CONTROLLER_ARGUMENTS
    case 'kernel.exception': return EXCEPTION
    case 'kernel.response': return RESPONSE
    case 'kernel.finish_request': return FINISH_REQUEST
    case 'kernel.terminate': return TERMINATE
  }
}

/** The stage's tracing channel when something subscribes to any of its events, else undefined. */
export function observedChannel (stage: StageName): StageTracingChannel | undefined {
  const channel = channelOf(stage)
  // TracingChannel#hasSubscribers is Node ≥ 20.13: ask its five channels
  return channel.start.hasSubscribers || channel.end.hasSubscribers || channel.asyncStart.hasSubscribers ||
    channel.asyncEnd.hasSubscribers || channel.error.hasSubscribers
    ? channel
    : undefined
}

function outcomeOf (event: StageEventMap[StageName]): StageOutcome {
  if (event.hasFailed) return 'threw'
  if ('response' in event && event.response !== undefined) return 'responded'
  return event.isPropagationStopped ? 'stopped' : 'completed'
}

/** The stage is over: its outcome, and its exception published on `error`. */
function settle (channel: StageTracingChannel, message: StageMessage, thrown?: { error: unknown }): void {
  message.outcome = thrown === undefined ? outcomeOf(message.event) : 'threw'
  if (thrown !== undefined) message.error = thrown.error
  else if (message.event.hasFailed) message.error = message.event.failure
  if (message.outcome === 'threw') channel.error.publish(message)
}

/**
 * Runs a stage inside its channel's events, as `tracingChannel.tracePromise()` does, but a stage
 * whose listeners are all synchronous stays synchronous (no promise, no async events). `start`
 * runs the stores bound to it (`channel.start.bindStore`) around the listeners, so what they
 * call is a child of the subscriber's span; the lifecycle goes on outside them.
 */
export function traceStage<S extends StageName> (
  channel: StageTracingChannel,
  event: StageEventMap[S],
  run: () => void | Promise<void>
): void | Promise<void> {
  const message: StageMessage = { stage: event.stage, request: event.request, event }
  return channel.start.runStores(message, () => {
    let result: void | Promise<void>
    try {
      result = run()
    } catch (error) {
      settle(channel, message, { error })
      channel.end.publish(message)
      throw error
    }
    if (result === undefined) settle(channel, message)
    channel.end.publish(message)
    if (result === undefined) return
    return result.then(() => {
      settle(channel, message)
      channel.asyncStart.publish(message)
      channel.asyncEnd.publish(message)
    }, (error: unknown) => {
      settle(channel, message, { error })
      channel.asyncStart.publish(message)
      channel.asyncEnd.publish(message)
      throw error
    })
  })
}
