/**
 * The API key and pixel id of this tab. Kept in sessionStorage only: gone when the tab closes, never
 * in the URL, never in localStorage or a cookie. Requests send them as the x-api-key and x-pixel-id
 * headers (docs/authentication.md).
 */

export interface Credentials {
  key: string;
  pixelId: string;
}

const KEY = "pixelhouse.apiKey";
const PIXEL = "pixelhouse.pixelId";
const LAST_PIXEL = "pixelhouse.lastPixelId";

export function loadCredentials(): Credentials | null {
  const key = sessionStorage.getItem(KEY);
  const pixelId = sessionStorage.getItem(PIXEL);
  return key && pixelId ? { key, pixelId } : null;
}

export function saveCredentials(c: Credentials): void {
  sessionStorage.setItem(KEY, c.key);
  sessionStorage.setItem(PIXEL, c.pixelId);
  sessionStorage.setItem(LAST_PIXEL, c.pixelId);
}

/** Forgets the key; the pixel id is remembered to prefill the form. */
export function clearCredentials(): void {
  sessionStorage.removeItem(KEY);
  sessionStorage.removeItem(PIXEL);
}

export const lastPixelId = () => sessionStorage.getItem(LAST_PIXEL) ?? "";
