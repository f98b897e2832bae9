import Amber
import AmberSQLite
import AmberTestSupport

extension StoreFixture {
    static let sqlite = StoreFixture(name: "sqlite") {
        let path = temporaryDirectory().appendingPathComponent("store.sqlite").path
        return { try SQLiteStorage(path: path) }
    }
}

let extraFixtures: [StoreFixture] = [.sqlite]
