import type { Credentials } from "./session.js";

/** A non-2xx answer: the status and the API's message (with its validation errors, if any). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

interface ErrorBody {
  message?: string;
  Message?: string;
  errors?: { message?: string }[];
}

async function errorOf(res: Response): Promise<ApiError> {
  const text = await res.text();
  let message = text || res.statusText || `HTTP ${res.status}`;
  try {
    const body = JSON.parse(text) as ErrorBody;
    const main = body.message ?? body.Message ?? message;
    const details = (body.errors ?? []).map((e) => e.message).filter((m): m is string => !!m);
    message = details.length && !details.includes(main) ? `${main}: ${details.join("; ")}` : main;
  } catch {
    // not JSON: keep the text
  }
  return new ApiError(res.status, message);
}

/** One API call with the key and pixel headers; resolves the Response of a 2xx answer. */
export async function request(
  creds: Credentials,
  method: "GET" | "POST" | "PATCH" | "DELETE",
  path: string,
  body?: unknown,
): Promise<Response> {
  const headers: Record<string, string> = { "x-api-key": creds.key, "x-pixel-id": creds.pixelId };
  if (body !== undefined) headers["content-type"] = "application/json";
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      headers,
      cache: "no-store",
      credentials: "omit",
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
  } catch (err) {
    throw new ApiError(0, `The service could not be reached (${(err as Error).message})`);
  }
  if (!res.ok) throw await errorOf(res);
  return res;
}

export async function getJson<T>(creds: Credentials, path: string): Promise<T> {
  return (await (await request(creds, "GET", path)).json()) as T;
}

export async function postJson<T>(creds: Credentials, path: string, body: unknown): Promise<T> {
  return (await (await request(creds, "POST", path, body)).json()) as T;
}

export async function patchJson<T>(creds: Credentials, path: string, body: unknown): Promise<T> {
  return (await (await request(creds, "PATCH", path, body)).json()) as T;
}

export async function deleteResource(creds: Credentials, path: string): Promise<void> {
  await request(creds, "DELETE", path);
}

/** The scopes of the key in use (GET /accounts/api/key). */
export async function keyScopes(creds: Credentials): Promise<Set<string>> {
  const r = await getJson<{ key: { scopes: string[] } }>(creds, "/accounts/api/key");
  return new Set(r.key.scopes);
}

/** A measure of GET /db-mgmt/api/measures. */
export interface Measure {
  key: string;
  title: string;
  shortTitle: string;
  description: string;
  valueType: string;
  isPercentage: boolean;
  preferredTrendDirection: string;
}
