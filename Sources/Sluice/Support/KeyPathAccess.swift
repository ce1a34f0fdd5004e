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

    /// Calls `body` with a pointer to the value at the key path inside `root`, valid only during the call.
    ///
    /// For a chain of stored properties the pointer points into `root` itself, so the value is not copied; other
    /// key paths produce the value (a copy) in a temporary.
    @inlinable
    func withPointer<Result, E: Error>(
        in root: UnsafePointer<Root>,
        _ body: (UnsafePointer<Value>) throws(E) -> Result
    ) throws(E) -> Result {
        guard let offset else {
            let value = root.pointee[keyPath: keyPath]
            return try withUnsafePointer(to: value) { (pointer) throws(E) -> Result in try body(pointer) }
        }
        return try body(UnsafeRawPointer(root).advanced(by: offset).assumingMemoryBound(to: Value.self))
    }
}

/// Gives in-place access to the value at a writable key path, directly at its offset in the root when the key
/// path allows it.
///
/// `root[keyPath: keyPath]` as an `inout` argument goes through the runtime's key path projection (and a
/// coroutine) on every call; for a chain of stored struct properties, the value is changed through a pointer at
/// `MemoryLayout<Root>.offset(of:)` instead, which is the equivalence that API documents. Either way the value is
/// changed in place: an array inside it is not copied.
@usableFromInline
struct KeyPathWriter<Root, Value>: Sendable {
    @usableFromInline
    let keyPath: any WritableKeyPath<Root, Value> & Sendable
    /// The byte offset of the value inside `Root`, or `nil` when the key path is not a chain of stored properties.
    @usableFromInline
    let offset: Int?

    @usableFromInline
    init(_ keyPath: any WritableKeyPath<Root, Value> & Sendable) {
        self.keyPath = keyPath
        offset = MemoryLayout<Root>.offset(of: keyPath as PartialKeyPath<Root>)
    }

    /// Calls `body` with the value at the key path in `root`, in place.
    @inlinable
    func modify(_ root: inout Root, _ body: (inout Value) -> Void) {
        guard let offset else {
            body(&root[keyPath: keyPath])
            return
        }
        withUnsafeMutablePointer(to: &root) { pointer in
            body(&(UnsafeMutableRawPointer(pointer) + offset).assumingMemoryBound(to: Value.self).pointee)
        }
    }
}
