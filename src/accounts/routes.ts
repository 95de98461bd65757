import { z } from "zod";
import { route } from "../http/route.js";
import { accountSchema, orderSettingsSchema } from "./schemas.js";
import type { AccountService } from "./service.js";

export function accountRoutes(accounts: AccountService) {
  return [
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
