/** What every masked value reads. */
export const REDACTED = '******'
