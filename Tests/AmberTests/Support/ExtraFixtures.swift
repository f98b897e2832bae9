import Amber
import AmberTestSupport
import AmberSQLite

extension StoreFixture {
    static let sqlite = StoreFixture(name: "sqlite") {
        let path = temporaryDirectory().appendingPathComponent("store.sqlite").path
        let store = try IdentityStore<Person>(key: "people", storage: SQLiteStorage(path: path))
        return (store, { try IdentityStore(key: "people", storage: SQLiteStorage(path: path)) })
    }
}

let extraFixtures: [StoreFixture] = [.sqlite]
