import { z } from 'zod';
import * as L from '../limits';
import { optionalBoolean, optionalString, PARAM } from './param-builders';
import { parameterDeclarations } from './report-parameter-params';

/** Parameters more than one method takes. */

export const saveReportParam = z
  .strictObject(
    {
      name: z
        .string({ error: `${PARAM} is required` })
        .trim()
        .max(L.REPORT_NAME_MAX, { error: `${PARAM} must be at most ${L.REPORT_NAME_MAX} characters` })
        .regex(/\S/, { error: `${PARAM} is required` })
        .meta({ description: 'The report name shown in REPORTS.FIND (leading and trailing blanks are dropped).' }),
      description: optionalString(L.REPORT_DESCRIPTION_MAX),
      folder: optionalString(L.REPORT_FOLDER_MAX),
      shared: optionalBoolean().meta({ description: 'Visible to every user who may read the index.', default: false }),
      parameters: parameterDeclarations.optional(),
    },
    { error: `${PARAM} must be an object` },
  )
  .meta({
    description:
      'Also save this call as a report (needs the reports:write scope). The result then carries report.guid.',
  });

export const cacheParam = optionalBoolean().meta({
  description: 'false skips the result cache for this call. Not an executable parameter: never saved in a report.',
  default: true,
});
