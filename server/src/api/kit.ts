import Type, { type TLiteral, type TNull, type TSchema, type TSchemaOptions, type TUnion } from 'typebox';

/*
 * Small building blocks of the API contract's schemas. Everything the contract declares is JSON Schema
 * (TypeBox builds it and derives the TypeScript types from it), so the same declaration validates a
 * request, serialises a response, is published as OpenAPI, and types the web client and the CLI.
 */

/** `T | null`: a figure the source may not have. */
export function Nullable<T extends TSchema>(t: T): TUnion<[T, TNull]> {
  return Type.Union([t, Type.Null()]);
}

/** One of a list of strings (a list of options.ts): `{anyOf: [{const}, …]}`, in the list's order. */
export function Literals<const T extends readonly string[]>(
  values: T,
  options?: TSchemaOptions,
): TUnion<{ -readonly [K in keyof T]: TLiteral<T[K]> }> {
  return Type.Union(
    values.map((v) => Type.Literal(v)),
    options,
  ) as unknown as TUnion<{ -readonly [K in keyof T]: TLiteral<T[K]> }>;
}

/** Opaque ids in URLs: random, URL-safe, at most 64 characters. */
export const Id = Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' });

/** A stage named in a query: its id, or its name as shown (at most 120 characters, as stage names are). */
export const StageRef = Type.String({ minLength: 1, maxLength: 120 });

/** `{error: {code, message, param?}}`: every 4xx and 5xx answer. */
export const ErrorBody = Type.Object({
  error: Type.Object({
    code: Type.String({ description: 'stable machine-readable code, e.g. not-found, invalid-filter' }),
    message: Type.String({ description: 'one sentence naming the file, stage or parameter and the problem' }),
    param: Type.Optional(Type.String({ description: 'the request parameter at fault, when one is' })),
  }),
});

/** A shape the model layer owns (see its doc comment), published without being restated here. */
export function Model<T>(description: string): ReturnType<typeof Type.Unsafe<T>> {
  return Type.Unsafe<T>({ description });
}
