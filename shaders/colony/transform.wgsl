// Where a node is drawn. The colony draws nodes where they grew; the
// skinned layer replaces this file's function with one that moves each
// node by its bone, so the same drawing rides an animation.

fn node_position(node: u32, grown: vec3<f32>) -> vec3<f32> {
    return grown;
}
