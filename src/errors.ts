/**
 * The one error hierarchy. Services and stores throw these; the HTTP error middleware is the only
 * place that turns them into status codes and bodies.
 */
export interface FieldIssue {
  message: string;
  key: string;
  path: string[];
}

/** A detail entry of the events API error envelope: which event of the batch, which field. */
export interface EventIssue {
  message: string;
  index: number;
  field: string;
}

export abstract class AppError extends Error {
  abstract readonly status: number;
  /** Machine-readable code for envelopes that carry one (events API); derived from status when absent. */
  readonly code?: string;
  /** Extra headers the response must carry (Retry-After, Allow…). */
  headers(): Record<string, string> {
    return {};
  }
  body(): Record<string, unknown> {
    return { message: this.message };
  }
}

export class BadRequestError extends AppError {
  readonly status = 400;
}

/** The body is not parseable JSON (syntax, or nesting deeper than allowed). */
export class MalformedJsonError extends BadRequestError {
  override readonly code = "INVALID_JSON";
  override body() {
    return { message: this.message, errors: [{ message: this.message, key: "body", path: [] as string[] }] };
  }
}

export class ValidationError extends AppError {
  readonly status = 400;
  constructor(
    readonly issues: FieldIssue[],
    message = "Bad Request",
  ) {
    super(message);
  }
  override body() {
    return { message: this.message, errors: this.issues };
  }
}

export class UnauthorizedError extends AppError {
  readonly status = 401;
  constructor() {
    super("Unauthorized");
  }
}

export const DENY_MESSAGE = "User is not authorized to access this resource with an explicit deny";

/** Unknown, revoked or expired key, key of another pixel, inactive pixel: both spellings of the field. */
export class AccessDeniedError extends AppError {
  readonly status = 403;
  constructor(readonly reason: string) {
    super(DENY_MESSAGE);
  }
  override body() {
    return { message: DENY_MESSAGE, Message: DENY_MESSAGE };
  }
}

export class ForbiddenError extends AppError {
  readonly status = 403;
}

export class MissingScopeError extends ForbiddenError {
  constructor(readonly scope: string) {
    super(`API key does not have the ${scope} scope`);
  }
}

export class NotFoundError extends AppError {
  readonly status = 404;
}

export class MethodNotAllowedError extends AppError {
  readonly status = 405;
  constructor(readonly allow: string[]) {
    super("Method Not Allowed");
  }
  override headers() {
    return { Allow: this.allow.join(", ") };
  }
}

export class ConflictError extends AppError {
  readonly status = 409;
}

export class PayloadTooLargeError extends AppError {
  readonly status = 413;
  constructor(readonly limitBytes: number) {
    super(`Request body exceeds the limit of ${limitBytes} bytes`);
  }
}

/** The body comes in a content coding the service does not decode; says which ones it does. */
export class UnsupportedEncodingError extends AppError {
  readonly status = 415;
  override readonly code = "UNSUPPORTED_ENCODING";
  constructor(
    readonly encoding: string,
    readonly accepted: readonly string[],
  ) {
    super(
      `Content-Encoding ${encoding} is not supported; send the body as ${accepted.join(", ")} or uncompressed`,
    );
  }
  override headers() {
    return { "Accept-Encoding": this.accepted.join(", ") };
  }
}

export class RateLimitedError extends AppError {
  readonly status = 429;
  constructor(
    readonly retryAfterSeconds: number,
    private readonly rateHeaders: Record<string, string> = {},
  ) {
    super("Too Many Requests");
  }
  override headers() {
    return { ...this.rateHeaders, "Retry-After": String(this.retryAfterSeconds) };
  }
}

/** A store is down or refused the write: the client should retry later. */
export class UnavailableError extends AppError {
  readonly status = 503;
  constructor(
    message: string,
    readonly retryAfterSeconds = 1,
  ) {
    super(message);
  }
  override headers() {
    return { "Retry-After": String(this.retryAfterSeconds) };
  }
}
