// OPTIONS: 204 with the path's Allow list (RFC 9110 §9.3.7), and the CORS preflight
// headers when the request's Origin is allowed. A 204 carries no body and no
// Content-Length.

import type { HttpRequest, HttpResponse } from './uws.js';

/** The Allow value of a path served with these route methods (GET implies HEAD). */
export function allowHeader(methods: Iterable<string>): string {
  const set = new Set<string>();
  for (const m of methods) {
    set.add(m.toUpperCase());
    if (m === 'get') set.add('HEAD');
  }
  set.add('OPTIONS');
  const order = ['GET', 'HEAD', 'POST', 'DELETE', 'OPTIONS'];
  return [...set].sort((a, b) => order.indexOf(a) - order.indexOf(b)).join(', ');
}

const DEFAULT_ALLOWED_HEADERS = 'authorization, content-type, x-api-key, x-request-id';

/**
 * Answer an OPTIONS request. `allow` is the path's Allow list (null for a path Portico
 * does not serve, answered only as a CORS preflight); `origin` the allowed origin to echo,
 * or null when CORS does not allow the request's.
 */
export function answerOptions(res: HttpResponse, req: HttpRequest, allow: string | null, origin: string | null): void {
  const requested = req.getHeader('access-control-request-headers');
  res.cork(() => {
    res.writeStatus('204 No Content');
    if (allow) res.writeHeader('allow', allow);
    if (origin) {
      res
        .writeHeader('access-control-allow-origin', origin)
        .writeHeader('vary', 'Origin')
        .writeHeader('access-control-allow-methods', allow ?? 'GET, POST, OPTIONS')
        .writeHeader('access-control-allow-headers', requested || DEFAULT_ALLOWED_HEADERS)
        .writeHeader('access-control-max-age', '600');
    }
    res.endWithoutBody();
  });
}
