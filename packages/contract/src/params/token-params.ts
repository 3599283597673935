import { z } from 'zod';
import * as L from '../limits';
import { CROSS, optionalString, PARAM, requiredString, string } from './param-builders';
import { parameterSettings } from './report-parameter-params';

export const tokensEmbedParams = z
  .strictObject({
    guid: optionalString(L.KEYWORD_MAX).meta({
      description: 'The saved report the token may run (REPORTS.EXECUTE), and nothing else. Give guid or index.',
    }),
    index: optionalString(L.INDEX_NAME_MAX).meta({
      description: 'The index the token may search and pivot (QUERIES.EXECUTE, CROSSTAB.EXECUTE), and nothing else.',
    }),
    realm: string(L.QUERY_MAX_LENGTH)
      .regex(/\S/, { error: `${PARAM} must not be blank (leave it out instead)` })
      .optional()
      .meta({
        description:
          "A query ANDed into every call the token makes, on top of the creator's own realms: it narrows what the creator may read, never widens it.",
      }),
    ttlSeconds: z
      .number({ error: `${PARAM} is required` })
      .int({ error: `${PARAM} must be an integer between 1 and ${L.EMBED_TTL_MAX_SECONDS}` })
      .min(1, { error: `${PARAM} must be an integer between 1 and ${L.EMBED_TTL_MAX_SECONDS}` })
      .max(L.EMBED_TTL_MAX_SECONDS, {
        error: `${PARAM} must be an integer between 1 and ${L.EMBED_TTL_MAX_SECONDS}`,
      })
      .meta({ description: 'How long the token is valid, in seconds (at most a day).' }),
    parameters: parameterSettings.optional().meta({
      description: `With guid: report parameters the token fixes (as REPORTS.EXECUTE takes them); its calls may set only the others (a fixed one sent is a 403). At most ${L.EMBED_PARAMETERS_JSON_MAX} characters as JSON: the token carries them.`,
    }),
  })
  .superRefine((p, ctx) => {
    if ((p.guid === undefined) === (p.index === undefined))
      ctx.addIssue({ code: 'custom', params: CROSS, path: [], message: 'give exactly one of guid and index' });
    if (p.parameters !== undefined && p.guid === undefined)
      ctx.addIssue({
        code: 'custom',
        params: CROSS,
        path: ['parameters'],
        message: `${PARAM} goes with guid (a report's parameters)`,
      });
    if (p.parameters !== undefined && JSON.stringify(p.parameters).length > L.EMBED_PARAMETERS_JSON_MAX)
      ctx.addIssue({
        code: 'custom',
        params: CROSS,
        path: ['parameters'],
        message: `${PARAM} must be at most ${L.EMBED_PARAMETERS_JSON_MAX} characters as JSON (the token carries them)`,
      });
  })
  .meta({ title: 'TokensEmbedParams' });

export const tokensRevokeEmbedParams = z
  .strictObject({
    id: requiredString(L.KEYWORD_MAX).meta({ description: 'The id TOKENS.EMBED returned with the token.' }),
  })
  .meta({ title: 'TokensRevokeEmbedParams' });

export const tokensWhoamiParams = z.strictObject({}).meta({ title: 'TokensWhoamiParams' });
