/// Reads the value at a key path, directly at its offset in the root when the key path allows it.
///
/// Applying a key path (`root[keyPath: keyPath]`) goes through the runtime's key path projection on every
/// call. For a key path made only of stored properties of structs (`\.orders.pending`),
/// `MemoryLayout<Root>.offset(of:)` gives the value's offset inside the root, and reading it through a pointer
/// is what that API is documented for. Other key paths (computed properties, class references, optional
/// chaining) fall back to the projection.
@usableFromInline
struct KeyPathReader<Root, Value>: Sendable {
    @usableFromInline
    let keyPath: any KeyPath<Root, Value> & Sendable
    /// The byte offset of the value inside `Root`, or `nil` when the key path is not a chain of stored properties.
    @usableFromInline
    let offset: Int?

    @usableFromInline
    init(_ keyPath: any KeyPath<Root, Value> & Sendable) {
        self.keyPath = keyPath
        offset = MemoryLayout<Root>.offset(of: keyPath as PartialKeyPath<Root>)
    }

    /// The value at the key path in `root`.
    @inlinable
    func callAsFunction(_ root: Root) -> Value {
        guard let offset else {
            return root[keyPath: keyPath]
        }
        return withUnsafePointer(to: root) { pointer in
            UnsafeRawPointer(pointer).advanced(by: offset).assumingMemoryBound(to: Value.self).pointee
        }
    }
}
