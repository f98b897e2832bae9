let extraFixtures: [StoreFixture] = []
