/**
 * The version-neutral view of an API description that the compiler reads:
 * OpenAPI 3.x (`openapi3.ts`) and Swagger 2.0 (`swagger2.ts`) are both mapped
 * onto these shapes by `readDocument` (`operations.ts`).
 */
import type { SecurityScheme } from '../catalog.js';

export type { SecurityScheme };

export interface ParameterView {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required: boolean;
  description?: string | undefined;
  /** Resolved schema. */
  schema: unknown;
  style?: string | undefined;
  explode?: boolean | undefined;
}

export interface BodyView {
  required: boolean;
  contentType: string;
  schema: unknown;
}

export interface OperationView {
  path: string;
  http: string;
  operationId?: string | undefined;
  summary: string;
  parameters: ParameterView[];
  body?: BodyView | undefined;
  /** Resolved schema of the first 2xx response with a body. */
  response?: unknown;
  /** Lower-cased names of the success response's headers. */
  responseHeaders: string[];
  /** Alternatives; each a list of scheme names (empty = anonymous). Undefined: the document's default. */
  security?: string[][] | undefined;
  /** Where the operation is, for errors. */
  pointer: string;
}

export interface DocumentView {
  format: string;
  title: string;
  version: string;
  servers: string[];
  securitySchemes: Record<string, SecurityScheme>;
  security: string[][];
  operations: OperationView[];
}
