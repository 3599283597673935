import { z } from 'zod';
import * as L from '../limits';
import { arrayOf, CROSS, oneOf, optionalBoolean, PARAM, requiredString } from './param-builders';

/*
 * Report parameters: declared on a saved report (a field of its index, values or a range), given at run
 * time by name. The gateway types each value by its field and writes it as a literal, never as query text.
 */

/** One value: text, a number or a boolean, as the parameter's field is (dates are ISO 8601 text). */
export const parameterValue = z.union(
  [
    z.string().max(L.PARAMETER_TEXT_MAX, { error: `${PARAM} must be at most ${L.PARAMETER_TEXT_MAX} characters` }),
    z.number().refine(Number.isFinite, { error: `${PARAM} must be a finite number` }),
    z.boolean(),
  ],
  { error: `${PARAM} must be a string, a number or a boolean` },
);

export const parameterValues = z
  .array(parameterValue, { error: `${PARAM} must be an array of values or an object {from, to}` })
  .min(1, { error: `${PARAM} must hold at least one value` })
  .max(L.MAX_PARAMETER_VALUES, { error: `${PARAM} may have at most ${L.MAX_PARAMETER_VALUES} values` })
  .meta({ description: 'Any of these values (ORed).' });

const rangeEnd = z.union(
  [
    z.string().max(L.PARAMETER_TEXT_MAX, { error: `${PARAM} must be at most ${L.PARAMETER_TEXT_MAX} characters` }),
    z.number().refine(Number.isFinite, { error: `${PARAM} must be a finite number` }),
  ],
  { error: `${PARAM} must be a number or a date` },
);

export const parameterRange = z
  .strictObject(
    { from: rangeEnd.optional(), to: rangeEnd.optional() },
    { error: `${PARAM} must be an array of values or an object {from, to}` },
  )
  .refine((r) => r.from !== undefined || r.to !== undefined, { error: `${PARAM} needs from or to` })
  .meta({
    description: 'from ≤ value ≤ to (a date end covers its whole period: "2024-03" is all of March).',
    minProperties: 1,
  });

const SETTING_SHAPE = `${PARAM} must be an array of values or an object {from, to}`;

/**
 * What a call gives one parameter: values for a "values" parameter, {from, to} for a "range" one. When
 * neither fits, the branch of the input's own shape says why (too many values, a bad end), not the union.
 */
export const parameterSetting = z.union([parameterValues, parameterRange], {
  error: (iss) => {
    if (iss.code !== 'invalid_union' || iss.input === null || typeof iss.input !== 'object') return SETTING_SHAPE;
    const branch = iss.errors[Array.isArray(iss.input) ? 0 : 1] ?? [];
    const first = branch[0];
    if (!first) return SETTING_SHAPE;
    // The inner issue's own path (an item, an end) is not the union's: it is written into the message.
    const at = first.path.map((k) => (typeof k === 'number' ? `[${k}]` : `.${String(k)}`)).join('');
    return first.message.split(PARAM).join(`${PARAM}${at}`);
  },
});

// The length first, alone: a huge name gets one short 400, not the pattern's too.
const parameterName = z
  .string({ error: `${PARAM} is required` })
  .max(L.PARAMETER_NAME_MAX, { error: `${PARAM} must be at most ${L.PARAMETER_NAME_MAX} characters`, abort: true })
  .regex(L.PARAMETER_NAME, {
    error: `${PARAM} must start with a letter and hold only letters, digits and "_" (at most ${L.PARAMETER_NAME_MAX})`,
  });

export const parameterDeclaration = z
  .strictObject(
    {
      name: parameterName.meta({ description: 'The key REPORTS.EXECUTE `parameters` gives it under.' }),
      field: requiredString(L.FIELD_NAME_MAX).meta({ description: "A field of the report's index." }),
      kind: oneOf(L.PARAMETER_KINDS).meta({
        description:
          'values: any of a list of values (text, numbers, dates, booleans); range: {from, to} (numbers, dates).',
      }),
      default: parameterSetting.optional().meta({
        description:
          'Applied when a run does not give the parameter: an array of values for a "values" parameter, one {from, to} object (not an array) for a "range" one; absent: no filter then.',
      }),
      // The default is stated in words: a saved report records the declaration as sent.
      required: optionalBoolean().meta({ description: 'true: a run must give it (no default then); absent: false.' }),
    },
    { error: `${PARAM} must be an object with name, field and kind` },
  )
  .superRefine((d, ctx) => {
    if (d.required === true && d.default !== undefined)
      ctx.addIssue({
        code: 'custom',
        params: CROSS,
        path: ['required'],
        message: `${PARAM}: give required or default, not both`,
      });
    if (d.default !== undefined && Array.isArray(d.default) !== (d.kind === 'values'))
      ctx.addIssue({
        code: 'custom',
        params: CROSS,
        path: ['default'],
        message: `${PARAM} must be ${d.kind === 'values' ? 'an array of values' : 'an object {from, to}'} for a ${d.kind} parameter`,
      });
  });

/** The declarations of a report (saveReport.parameters, REPORTS.UPDATE parameters); names are unique. */
export const parameterDeclarations = arrayOf(parameterDeclaration, L.MAX_REPORT_PARAMETERS)
  .superRefine((list, ctx) => {
    const seen = new Set<string>();
    list.forEach((d, i) => {
      if (typeof d?.name !== 'string') return;
      const key = d.name.toLowerCase();
      if (seen.has(key))
        ctx.addIssue({
          code: 'custom',
          params: CROSS,
          path: [i, 'name'],
          message: `${PARAM} ${JSON.stringify(d.name)} is declared twice (names are compared without case)`,
        });
      seen.add(key);
    });
  })
  .meta({
    description:
      "Parameters a run of the report may set, each on a field of the report's index: its values are ANDed with the saved query as literals (never query syntax).",
  });

/** A call's parameters by name (REPORTS.EXECUTE, TOKENS.EMBED). */
export const parameterSettings = z
  .record(
    z
      .string()
      .max(L.PARAMETER_NAME_MAX, { error: `${PARAM}: a parameter name is at most ${L.PARAMETER_NAME_MAX} characters` }),
    parameterSetting,
    {
      error: `${PARAM} must be an object {<name>: [values] | {from, to}}`,
    },
  )
  .refine((r) => Object.keys(r).length <= L.MAX_REPORT_PARAMETERS, {
    error: `${PARAM} may set at most ${L.MAX_REPORT_PARAMETERS} parameters`,
  });

export type ParameterDeclaration = z.output<typeof parameterDeclaration>;
export type ParameterSetting = z.output<typeof parameterSetting>;
export type ParameterSettings = z.output<typeof parameterSettings>;
