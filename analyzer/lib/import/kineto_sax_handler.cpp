// The Kineto handler's walk through the document: which context each key and value belongs to (the
// top-level object, the events, an event, its args and their arrays, deviceProperties, distributedInfo),
// and the phase that decides what a finished event becomes.

#include "import/kineto_sax_handler.h"

#include "import/kineto_names.h"

namespace tuneup::analysis {

using namespace kineto;

bool KinetoHandler::key(std::string_view k) {
    if (m_skip > 0) return true;
    switch (m_stack.back()) {
    case Ctx::TopObject:
        m_topKeyText.assign(k.data(), k.size());
        if (k == "traceEvents")
            m_topKey = TopKey::TraceEvents;
        else if (k == "deviceProperties")
            m_topKey = TopKey::DeviceProperties;
        else if (k == "distributedInfo")
            m_topKey = TopKey::DistributedInfo;
        else if (k == "displayTimeUnit")
            m_topKey = TopKey::DisplayTimeUnit;
        else if (k == "baseTimeNanoseconds")
            m_topKey = TopKey::BaseTime;
        else if (k == "schemaVersion")
            m_topKey = TopKey::SchemaVersion;
        else if (k == "traceName")
            m_topKey = TopKey::TraceName;
        else
            m_topKey = TopKey::Other;
        break;
    case Ctx::Event:
        m_eventKey = eventKey(k);
        break;
    case Ctx::Args:
        m_argKey = argKey(k);
        if (m_argKey == Field::None && m_category == Category::ProfilerRange) m_counterName.assign(k.data(), k.size());
        break;
    case Ctx::Device:
    case Ctx::DistInfo:
        m_objectKey.assign(k.data(), k.size());
        break;
    default:
        break;
    }
    return true;
}

bool KinetoHandler::value(ValueType type, std::string_view text, bool copy) {
    if (m_skip > 0) return true;
    const bool isString = type == ValueType::String;
    switch (m_stack.back()) {
    case Ctx::Event:
        if (m_eventKey == Field::Args || m_eventKey == Field::None) break;
        set(m_eventKey, text, isString, copy);
        if (m_eventKey == Field::Cat) m_category = classifyCategory(text);
        break;
    case Ctx::Args:
        if (m_argKey != Field::None && m_argKey != Field::Grid && m_argKey != Field::Block) {
            set(m_argKey, text, isString, copy);
        } else if (m_argKey == Field::None && m_category == Category::ProfilerRange && type == ValueType::Number) {
            if (m_counterCount == m_counterArgs.size()) m_counterArgs.emplace_back();
            m_counterArgs[m_counterCount].first = m_counterName;
            m_counterArgs[m_counterCount].second.assign(text.data(), text.size());
            ++m_counterCount;
        }
        break;
    case Ctx::ArgArray:
        arrayValue(type, text);
        break;
    case Ctx::Root:
        return fail(ImportError::Kind::NotATrace,
            "the JSON text is a single value, not a trace: expected an object with \"traceEvents\" or an array of "
            "events");
    case Ctx::TopObject:
        switch (m_topKey) {
        case TopKey::TraceEvents:
            return fail(ImportError::Kind::NotATrace, "\"traceEvents\" is not an array");
        case TopKey::DisplayTimeUnit:
            m_b.info().displayTimeUnit = std::string(text);
            break;
        case TopKey::BaseTime:
            if (auto v = parseInteger(text)) m_baseTimeNs = *v;
            break;
        case TopKey::SchemaVersion:
            if (auto v = parseInteger(text); v && *v >= INT32_MIN && *v <= INT32_MAX)
                m_b.info().schemaVersion = static_cast<int>(*v);
            break;
        case TopKey::TraceName:
            m_b.info().traceName = std::string(text);
            break;
        default:
            if (text.size() <= 4096 && m_b.info().metadata.size() < 256)
                m_b.info().metadata.emplace_back(m_topKeyText, std::string(text));
            break;
        }
        break;
    case Ctx::Events:
        if (m_placeholderPending)
            m_placeholderPending = false;
        else
            count(Counter::NonObjectEvent);
        break;
    case Ctx::Devices:
        break; // not a device description: nothing to read
    case Ctx::Device:
        if (m_objectKey == "id")
            m_device.id = static_cast<int32_t>(parseInteger(text).value_or(0));
        else if (m_objectKey == "name")
            m_device.name = std::string(text);
        else if (m_objectKey == "totalGlobalMem")
            m_device.globalMemoryBytes = parseInteger(text).value_or(0);
        else if (m_objectKey == "computeMajor")
            m_device.computeMajor = static_cast<int>(parseInteger(text).value_or(0));
        else if (m_objectKey == "computeMinor")
            m_device.computeMinor = static_cast<int>(parseInteger(text).value_or(0));
        else if (m_objectKey == "numSms")
            m_device.smCount = static_cast<int>(parseInteger(text).value_or(0));
        else if (m_objectKey == "warpSize")
            m_device.warpSize = static_cast<int>(parseInteger(text).value_or(0));
        break;
    case Ctx::DistInfo:
        if (m_objectKey == "rank") {
            if (auto v = parseInteger(text); v && *v >= 0 && *v <= INT32_MAX) m_b.info().rank = static_cast<int>(*v);
        } else if (m_objectKey == "world_size") {
            if (auto v = parseInteger(text); v && *v > 0 && *v <= INT32_MAX)
                m_b.info().worldSize = static_cast<int>(*v);
        } else if (m_objectKey == "backend") {
            m_b.info().backend = std::string(text);
        } else if (text.size() <= 4096) {
            m_b.info().metadata.emplace_back("distributedInfo." + m_objectKey, std::string(text));
        }
        break;
    }
    return true;
}

void KinetoHandler::arrayValue(ValueType type, std::string_view text) {
    if (m_arrayField == Field::Grid || m_arrayField == Field::Block) {
        auto& dims = m_arrayField == Field::Grid ? m_grid : m_block;
        int& n = m_arrayField == Field::Grid ? m_gridCount : m_blockCount;
        if (m_arrayDepth == 1 && n < 3)
            dims[static_cast<size_t>(n++)] = static_cast<int32_t>(integerValue(text).value_or(0));
        return;
    }
    if (m_arrayField == Field::InputTypes) {
        if (m_arrayDepth != 1) return; // types are a flat list
        if (m_arrayHasItems & 2) m_arrayText->push_back(',');
        m_arrayHasItems |= 2;
        m_arrayText->append(text);
        return;
    }
    // InputDims: compact JSON
    const uint64_t bit = uint64_t(1) << std::min(m_arrayDepth, 63);
    if (m_arrayHasItems & bit) m_arrayText->push_back(',');
    m_arrayHasItems |= bit;
    if (type == ValueType::String) {
        m_arrayText->push_back('"');
        for (char c : text) {
            if (c == '"' || c == '\\') m_arrayText->push_back('\\');
            m_arrayText->push_back(c);
        }
        m_arrayText->push_back('"');
    } else {
        m_arrayText->append(text);
    }
}

bool KinetoHandler::StartObject() {
    if (m_skip > 0) {
        ++m_skip;
        return true;
    }
    switch (m_stack.back()) {
    case Ctx::Events:
        beginEvent();
        m_stack.push_back(Ctx::Event);
        break;
    case Ctx::Event:
        if (m_eventKey == Field::Args)
            m_stack.push_back(Ctx::Args);
        else
            skipContainer();
        break;
    case Ctx::Root:
        m_sawRoot = true;
        m_stack.push_back(Ctx::TopObject);
        break;
    case Ctx::TopObject:
        if (m_topKey == TopKey::TraceEvents)
            return fail(ImportError::Kind::NotATrace, "\"traceEvents\" is not an array");
        if (m_topKey == TopKey::DistributedInfo) {
            m_objectKey.clear();
            m_stack.push_back(Ctx::DistInfo);
        } else {
            skipContainer();
        }
        break;
    case Ctx::Devices:
        m_device = DeviceInfo();
        m_objectKey.clear();
        m_stack.push_back(Ctx::Device);
        break;
    case Ctx::ArgArray:
        if (m_arrayField == Field::InputDims) {
            // Not expected in Input Dims; keep the text valid JSON.
            const uint64_t bit = uint64_t(1) << std::min(m_arrayDepth, 63);
            if (m_arrayHasItems & bit) m_arrayText->push_back(',');
            m_arrayHasItems |= bit;
            m_arrayText->append("{}");
        }
        skipContainer();
        break;
    default:
        skipContainer();
        break;
    }
    return true;
}

bool KinetoHandler::EndObject(rapidjson::SizeType) {
    if (m_skip > 0) {
        --m_skip;
        return true;
    }
    const Ctx ctx = m_stack.back();
    m_stack.pop_back();
    switch (ctx) {
    case Ctx::Event:
        endEvent();
        break;
    case Ctx::Device:
        if (m_device.vendor == GpuVendor::Unknown) m_device.vendor = vendorFromDeviceName(m_device.name);
        m_b.addDevice(std::move(m_device));
        m_device = DeviceInfo();
        break;
    case Ctx::Args:
        m_argKey = Field::None;
        break;
    default:
        break;
    }
    return true;
}

// An array of events starts. A window reads its events itself; the document has them read by
// readEvents, which leaves the input at the closing bracket, so that the parser sees an empty array.
bool KinetoHandler::enterEvents() {
    m_sawTraceEvents = true;
    m_stack.push_back(Ctx::Events);
    if (m_role == Role::Document && m_readEvents && !(*m_readEvents)()) {
        if (!m_failure)
            m_failure = Failure { ImportError::Kind::Malformed, "the events could not be read", std::nullopt };
        return false;
    }
    return true;
}

bool KinetoHandler::StartArray() {
    if (m_skip > 0) {
        ++m_skip;
        return true;
    }
    switch (m_stack.back()) {
    case Ctx::Args:
        if (m_argKey == Field::Grid || m_argKey == Field::Block || m_argKey == Field::InputDims
            || m_argKey == Field::InputTypes) {
            m_arrayField = m_argKey;
            m_arrayDepth = 1;
            m_arrayHasItems = 0;
            m_arrayText = m_argKey == Field::InputDims ? &m_inputDims : &m_inputTypes;
            m_arrayText->clear();
            if (m_argKey == Field::InputDims) m_arrayText->push_back('[');
            m_present |= uint64_t(1) << static_cast<size_t>(m_argKey);
            m_text[static_cast<size_t>(m_argKey)] = {};
            m_stack.push_back(Ctx::ArgArray);
        } else {
            skipContainer();
        }
        break;
    case Ctx::ArgArray:
        if (m_arrayField == Field::InputDims) {
            const uint64_t bit = uint64_t(1) << std::min(m_arrayDepth, 63);
            if (m_arrayHasItems & bit) m_arrayText->push_back(',');
            m_arrayHasItems |= bit;
            ++m_arrayDepth;
            m_arrayHasItems &= ~(uint64_t(1) << std::min(m_arrayDepth, 63));
            m_arrayText->push_back('[');
        } else {
            ++m_arrayDepth;
        }
        break;
    case Ctx::Events:
        count(Counter::NonObjectEvent);
        skipContainer();
        break;
    case Ctx::Root:
        m_sawRoot = true;
        // A window's text is its events; a document that is an array is the 2020 form.
        if (m_role == Role::Document) m_b.info().legacyArrayForm = true;
        return enterEvents();
    case Ctx::TopObject:
        if (m_topKey == TopKey::TraceEvents) return enterEvents();
        if (m_topKey == TopKey::DeviceProperties)
            m_stack.push_back(Ctx::Devices);
        else
            skipContainer();
        break;
    default:
        skipContainer();
        break;
    }
    return true;
}

bool KinetoHandler::EndArray(rapidjson::SizeType) {
    if (m_skip > 0) {
        --m_skip;
        return true;
    }
    if (m_stack.back() == Ctx::ArgArray) {
        if (m_arrayField == Field::InputDims) m_arrayText->push_back(']');
        if (--m_arrayDepth > 0) return true;
        m_text[static_cast<size_t>(m_arrayField)] = *m_arrayText; // complete: valid until the next array
        m_arrayField = Field::None;
        m_arrayText = nullptr;
    }
    m_stack.pop_back();
    return true;
}

void KinetoHandler::endEvent() {
    m_b.stats().eventsRead++;
    const std::string_view ph = get(Field::Ph);
    const char phase = ph.size() == 1 ? ph[0] : '\0';
    switch (phase) {
    case 'X':
        completeEvent();
        break;
    case 'M':
        metadataEvent();
        break;
    case 's':
    case 'f':
    case 't':
        flowEvent(phase);
        break;
    case 'i':
    case 'I':
        if (m_category == Category::CpuInstant && get(Field::Name) == "[memory]")
            memoryEvent();
        else
            count(m_category == Category::CpuInstant ? Counter::CpuInstant : Counter::Instant);
        break;
    case 'B':
    case 'E':
        count(Counter::BeginEnd);
        break;
    case 'C':
        count(Counter::CounterEvent);
        break;
    default:
        count(Counter::UnknownPhase);
        break;
    }
}

} // namespace tuneup::analysis
