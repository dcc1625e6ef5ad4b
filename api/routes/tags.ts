/** An OpenAPI tag: its name (a route's `tag`) and the description OpenAPI lists for it. */
export interface RouteTag {
  name: string;
  description: string;
}

const DECLARED = new Map<string, string>();

/**
 * Declares the OpenAPI tag `name` with its description where its routes are declared (a resource file
 * of api/routes/, an artifact with a route) and returns the name for the routes' `tag`. The OpenAPI
 * document lists the declared tags its documented routes use (api/openapi.ts), so no list of tags is
 * kept by hand. Declaring a name again with the same description is a no-op.
 * @throws Error when `name` is already declared with another description.
 */
export function declareTag(name: string, description: string): string {
  const known = DECLARED.get(name);
  if (known !== undefined && known !== description)
    throw new Error(`OpenAPI tag ${name} is declared twice with different descriptions`);
  DECLARED.set(name, description);
  return name;
}

/**
 * The tags of `routeTags` (route `tag` values, in route order), each once in order of first use, then
 * the declared tags no such route uses yet (e.g. `not-yet-available` while no route is), in order of
 * declaration; each with its declared description.
 * @throws Error naming a tag of `routeTags` no module declared (declareTag).
 */
export function declaredTags(routeTags: readonly string[]): RouteTag[] {
  return [...new Set([...routeTags, ...DECLARED.keys()])].map((name) => {
    const description = DECLARED.get(name);
    if (description === undefined) throw new Error(`OpenAPI tag ${name} is used by a route but never declared`);
    return { name, description };
  });
}
