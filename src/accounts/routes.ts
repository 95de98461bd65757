import { z } from "zod";
import { route } from "../http/route.js";
import { accountSchema, orderSettingsSchema, renameAccountSchema } from "./schemas.js";
import type { AccountService } from "./service.js";

export function accountRoutes(accounts: AccountService) {
  return [
    route({
      method: "get",
      path: "/accounts/api/key",
      auth: "any-key",
      tag: "Account",
      summary: "The calling key: its id, pixel and scopes",
      description:
        "Any valid key may read itself (never its secret). The web pages use the scopes to show editing " +
        "controls only to keys that can write.",
      response: z.object({
        key: z.object({ id: z.string(), pixelId: z.string(), scopes: z.array(z.string()) }),
      }),
      handler: ({ principal }) => ({
        key: { id: principal.keyId, pixelId: principal.pixelId, scopes: [...principal.scopes].sort() },
      }),
    }),

    route({
      method: "get",
      path: "/accounts/api/account",
      auth: "account:read",
      tag: "Account",
      summary: "Read the account that owns the key's pixel",
      description: "Public projection: active owners and admins only; internal fields are never returned.",
      response: z.object({ account: accountSchema }),
      handler: async ({ principal }) => ({ account: await accounts.get(principal.accountId) }),
    }),
    route({
      method: "patch",
      path: "/accounts/api/account",
      auth: "account:write",
      tag: "Account",
      summary: "Rename the account that owns the key's pixel",
      description:
        "Body `{accountName}` and nothing else. Answers the renamed account like GET. The rename and " +
        "its `accountUpdated` event (actor `cli:<apiKeyPk>`) commit together; the event reaches the " +
        "event bus through the outbox relay (docs/events.md). Renaming to the current name answers " +
        "200 and emits no event.",
      body: renameAccountSchema,
      response: z.object({ account: accountSchema }),
      handler: async ({ body, principal }) => ({
        account: await accounts.rename(principal, body.accountName),
      }),
    }),
    route({
      method: "get",
      path: "/accounts/api/account/settings/order",
      auth: "account:read",
      tag: "Account",
      summary: "Read the account's order settings (defaults applied)",
      response: z.object({ orderSettings: orderSettingsSchema }),
      handler: async ({ principal }) => ({
        orderSettings: await accounts.orderSettings(principal.accountId),
      }),
    }),
  ];
}
