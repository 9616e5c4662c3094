@testable import JackAudioSession
import JackKit
import XCTest

/// How the session makes devices of a server's ports, decided from what a
/// `PortDirectory` answers: here a directory of ports and properties held in
/// memory, no jackd. (The same questions asked of a real server are the
/// route tests' `SimulatedDevice`s.)
final class DeviceCatalogTests: XCTestCase {
    /// Ports and metadata as a server would list them.
    struct ServerPorts: PortDirectory {
        var ports: [(name: String, flags: PortFlags)] = []
        var properties: [UInt64: [String: String]] = [:]

        /// Adds the physical capture ports (`output` to JACK) or playback ports of a client, each with its properties.
        mutating func add(_ client: String, capture: Bool, _ shortNames: [String], each: [String: String] = [:]) {
            for shortName in shortNames {
                ports.append((name: "\(client):\(shortName)", flags: [.physical, capture ? .output : .input]))
                if !each.isEmpty { properties[portUUID(named: "\(client):\(shortName)")!] = each }
            }
        }

        mutating func setClientProperty(_ client: String, _ key: String, _ value: String) {
            properties[clientUUID(named: client)!, default: [:]][key] = value
        }

        func audioPortNames(flags: PortFlags) -> [String] { ports.filter { $0.flags.contains(flags) }.map(\.name) }
        // UUIDs from the names: stable, distinct for ports and clients.
        func portUUID(named fullName: String) -> UInt64? {
            ports.contains { $0.name == fullName } ? Self.uuid("port " + fullName) : nil
        }
        func clientUUID(named clientName: String) -> UInt64? {
            ports.contains { $0.name.hasPrefix(clientName + ":") } ? Self.uuid("client " + clientName) : nil
        }
        func property(_ key: String, on subject: UInt64) -> String? { properties[subject]?[key] }

        private static func uuid(_ text: String) -> UInt64 {
            text.utf8.reduce(14_695_981_039_346_656_037) { ($0 ^ UInt64($1)) &* 1_099_511_628_211 }
        }
    }

    func testAClientWithOneGroupIsOneDeviceNamedByItsPrettyName() {
        var server = ServerPorts()
        server.add("system", capture: true, ["capture_1", "capture_2"])
        server.add("system", capture: false, ["playback_1", "playback_2"])
        server.setClientProperty("system", MetadataKey.prettyName, "Desk")
        let catalog = DeviceCatalog(reading: server)
        XCTAssertEqual(catalog.inputs.map(\.uid), ["system"])
        XCTAssertEqual(catalog.inputs[0].portType, .lineIn, "no port-type metadata: line in")
        XCTAssertEqual(catalog.inputs[0].channels, [
            ChannelDescription(channelName: "Desk 1", channelNumber: 1, jackPort: "system:capture_1"),
            ChannelDescription(channelName: "Desk 2", channelNumber: 2, jackPort: "system:capture_2"),
        ])
        XCTAssertNil(catalog.inputs[0].dataSources)
        XCTAssertEqual(catalog.outputs.map(\.portName), ["Desk"])
        XCTAssertEqual(catalog.outputs[0].portType, .lineOut)
        XCTAssertEqual(catalog.device(containing: "system:playback_2")?.uid, "system")
    }

    func testAnEmptyPrettyNameIsTheClientsOwnNameAndNonPhysicalPortsAreNoDevice() {
        var server = ServerPorts()
        server.add("usb", capture: false, ["out_1"], each: [AudioSessionPort.metadataKey: "usbAudio"])
        server.setClientProperty("usb", MetadataKey.prettyName, "")
        server.ports.append((name: "player:out_1", flags: [.output]))
        let catalog = DeviceCatalog(reading: server)
        XCTAssertEqual(catalog.outputs.map(\.portName), ["usb"])
        XCTAssertEqual(catalog.outputs[0].portType, .usbAudio, "the port-type metadata says what the device is")
        XCTAssertTrue(catalog.inputs.isEmpty)
        XCTAssertEqual(catalog.portNames, ["usb:out_1"])
    }

    func testAnInterfacesInputGroupsAreDataSourcesWithTheirTraitsTheFirstSelected() {
        var server = ServerPorts()
        server.add("card", capture: true, ["in_1", "in_2"], each: [MetadataKey.portGroup: "analogue",
                                                                  DataSourceTraits.locationKey: "Lower",
                                                                  DataSourceTraits.orientationKey: "Front",
                                                                  DataSourceTraits.supportedPolarPatternsKey: "Cardioid, Omnidirectional"])
        server.add("card", capture: true, ["adat_1"], each: [MetadataKey.portGroup: "ADAT"])
        let catalog = DeviceCatalog(reading: server)
        XCTAssertEqual(catalog.inputs.count, 1, "one device with a data source per group")
        let card = catalog.inputs[0]
        XCTAssertEqual(card.uid, "card")
        XCTAssertEqual(card.dataSources?.map(\.dataSourceName), ["analogue", "ADAT"])
        XCTAssertEqual(card.dataSources?.map(\.dataSourceID), [1, 2])
        XCTAssertEqual(card.selectedDataSource?.dataSourceName, "analogue")
        XCTAssertEqual(card.channels.map(\.jackPort), ["card:in_1", "card:in_2"], "the selected source's channels")
        XCTAssertEqual(card.dataSources?[1].channels.map(\.channelName), ["card ADAT 1"])
        XCTAssertEqual(card.dataSources?[0].traits.location, .lower)
        XCTAssertEqual(card.dataSources?[0].traits.orientation, .front)
        XCTAssertEqual(card.dataSources?[0].traits.supportedPolarPatterns, [.cardioid, .omnidirectional])
        XCTAssertEqual(card.dataSources?[1].traits, DataSourceTraits(), "a bank that says nothing has no traits")
        // A port of the second bank belongs to the device with that bank selected.
        XCTAssertEqual(catalog.device(containing: "card:adat_1")?.selectedDataSource?.dataSourceName, "ADAT")
    }

    func testAnInterfacesOutputGroupsAreDevicesOfTheirOwn() {
        var server = ServerPorts()
        server.add("card", capture: false, ["out_1", "out_2"], each: [MetadataKey.portGroup: "mains"])
        server.add("card", capture: false, ["out_3", "out_4"], each: [MetadataKey.portGroup: "phones",
                                                                     AudioSessionPort.metadataKey: "headphones"])
        server.setClientProperty("card", MetadataKey.prettyName, "Studio")
        let catalog = DeviceCatalog(reading: server)
        XCTAssertEqual(catalog.outputs.map(\.uid), ["card/mains", "card/phones"])
        XCTAssertEqual(catalog.outputs.map(\.portName), ["Studio mains", "Studio phones"])
        XCTAssertEqual(catalog.outputs.map(\.portType), [.lineOut, .headphones])
        XCTAssertEqual(catalog.output("card/phones")?.channels.map(\.channelName), ["Studio phones 1", "Studio phones 2"])
    }

    func testWithoutGroupsPortsAreGroupedByTheirTypeInTheServersOrder() {
        var server = ServerPorts()
        server.add("dev", capture: false, ["a"], each: [AudioSessionPort.metadataKey: "HDMI"])
        server.add("dev", capture: false, ["b"], each: [AudioSessionPort.metadataKey: "builtInSpeaker"])
        server.add("dev", capture: false, ["c"], each: [AudioSessionPort.metadataKey: "HDMI"])
        let catalog = DeviceCatalog(reading: server)
        XCTAssertEqual(catalog.outputs.map(\.uid), ["dev/HDMI", "dev/builtInSpeaker"])
        XCTAssertEqual(catalog.output("dev/HDMI")?.channels.map(\.jackPort), ["dev:a", "dev:c"])
        XCTAssertEqual(catalog.output("dev/builtInSpeaker")?.portType, .builtInSpeaker)
    }
}
