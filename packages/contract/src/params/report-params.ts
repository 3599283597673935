import { z } from 'zod';
import { IMAGE_FORMATS } from '../chart-names';
import { quoteList } from '@quarry/errors';
import * as L from '../limits';
import {
  arrayOf,
  CROSS,
  intInRange,
  keywordOf,
  oneOf,
  optionalBoolean,
  optionalString,
  PARAM,
  requiredString,
  string,
} from './param-builders';
import { saveReportParam } from './shared-params';
import { parameterDeclarations, parameterSettings } from './report-parameter-params';

export const reportsFindParams = z
  .strictObject({
    search: optionalString(L.SEARCH_TEXT_MAX).meta({
      description: 'Words matched against report names and descriptions.',
    }),
    // One message for the list (every wrong type named at once); JSON Schema gets the same set as an enum.
    types: arrayOf(string(L.KEYWORD_MAX).meta({ enum: [...L.REPORT_TYPES] }), L.MAX_REPORT_TYPES)
      .superRefine((types, ctx) => {
        // Items already refused for their length are not quoted again.
        const bad = types.filter(
          (t) =>
            typeof t === 'string' && t.length <= L.KEYWORD_MAX && !(L.REPORT_TYPES as readonly string[]).includes(t),
        );
        if (bad.length)
          ctx.addIssue({
            code: 'custom',
            message: `${PARAM} may hold only ${L.REPORT_TYPES.join(' and ')}, got ${quoteList(bad)}`,
          });
      })
      .optional(),
    cursor: optionalString(L.CURSOR_MAX),
    limit: intInRange(1, L.MAX_REPORT_LIMIT).meta({ default: L.DEFAULT_REPORT_LIMIT }),
  })
  .meta({ title: 'ReportsFindParams' });

const reportGuid = () =>
  requiredString(L.KEYWORD_MAX).meta({ description: 'The guid REPORTS.FIND or saveReport returned.' });

const reportVersion = () =>
  intInRange(1, L.INT32_MAX).meta({ description: 'A version of the report (1 is the first); absent: the latest.' });

export const reportsMetadataParams = z
  .strictObject({ guid: reportGuid(), version: reportVersion() })
  .meta({ title: 'ReportsMetadataParams' });

export const reportsExecuteParams = z
  .strictObject({
    guid: reportGuid(),
    version: reportVersion(),
    page: intInRange(1, L.INT32_MAX).meta({ description: 'A query report: this page instead of the saved one.' }),
    pageSize: intInRange(1, L.MAX_PAGE_SIZE).meta({
      description: 'A query report: this page size instead of the saved one.',
    }),
    format: oneOf(L.CROSSTAB_FORMATS).optional().meta({
      description: 'A crosstab report: the table in this format (a chart report is then drawn as a table).',
    }),
    imageFormat: keywordOf(IMAGE_FORMATS, (v) => `${v} is not supported; use one of ${IMAGE_FORMATS.join(', ')}`, {
      exact: true,
    })
      .optional()
      .meta({ description: 'A chart report: png or svg instead of the saved one.' }),
    asOf: oneOf(L.AS_OF).optional().meta({
      default: L.DEFAULT_AS_OF,
      description:
        'latest: the index as it is now; saved: the index snapshot that was current when this report version was saved (while it is kept).',
    }),
    parameters: parameterSettings.optional().meta({
      description:
        'Values of the parameters the report declares (REPORTS.METADATA lists them), by name: an array of values for a "values" parameter, {from, to} for a "range" one. Each is ANDed with the saved query; a parameter not given takes its default.',
    }),
  })
  .superRefine((p, ctx) => {
    if (p.format !== undefined && p.imageFormat !== undefined)
      ctx.addIssue({
        code: 'custom',
        params: CROSS,
        path: ['imageFormat'],
        message: `${PARAM} is for charts; give format or imageFormat, not both`,
      });
  })
  .meta({ title: 'ReportsExecuteParams' });

export const reportsUpdateParams = z
  .strictObject({
    guid: reportGuid(),
    name: saveReportParam.shape.name.optional(),
    description: optionalString(L.REPORT_DESCRIPTION_MAX),
    folder: optionalString(L.REPORT_FOLDER_MAX),
    shared: optionalBoolean().meta({ description: 'Visible to every user who may read the index.' }),
    params: z
      .record(z.string(), z.unknown(), { error: `${PARAM} must be an object` })
      .optional()
      .meta({
        description:
          "New executable params for the report's method (as REPORTS.METADATA shows them, on the same index), checked and run as when a report is saved: they make a new version. Name, description, folder and sharing changes make none.",
      }),
    parameters: parameterDeclarations.optional().meta({
      description:
        "The report's parameters, replacing the declared ones ([] removes them all): a new version, like params.",
    }),
  })
  .superRefine((p, ctx) => {
    if (
      p.name === undefined &&
      p.description === undefined &&
      p.folder === undefined &&
      p.shared === undefined &&
      p.params === undefined &&
      p.parameters === undefined
    )
      ctx.addIssue({
        code: 'custom',
        params: CROSS,
        path: [],
        message: 'give at least one of name, description, folder, shared, params or parameters to change',
      });
  })
  .meta({ title: 'ReportsUpdateParams' });

export const reportsDeleteParams = z.strictObject({ guid: reportGuid() }).meta({ title: 'ReportsDeleteParams' });
