// Picking the shape nearest another among those a model draws: by the distance of their aspect
// ratios' logarithms, so 2:1 is as far from 1:1 as 1:2 is.

/**
 * Of `shapes` (`16:9`, or `1024x768` with `separator` "x"), the one whose width / height is
 * nearest `width / height`; the first of equals; undefined for none.
 */
export function nearestShape(shapes: Iterable<string>, separator: string, width: number, height: number): string | undefined {
  const target = Math.log(width / height);
  let best: { shape: string; distance: number } | undefined;
  for (const shape of shapes) {
    const [shapeWidth, shapeHeight] = shape.split(separator).map(Number) as [number, number];
    const distance = Math.abs(Math.log(shapeWidth / shapeHeight) - target);
    if (!best || distance < best.distance) best = { shape, distance };
  }
  return best?.shape;
}
