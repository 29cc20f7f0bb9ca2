/** A response built by the kernel itself (error pages, redirects, early answers): plain data the lifecycle sends. */
export interface KernelResponse {
  statusCode: number
  headers: Record<string, string>
  contentType: string
  body: string
}
