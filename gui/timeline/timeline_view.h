#pragma once
// The timeline: a widget that paints its tracks itself (no QGraphicsScene, so that it scales to
// millions of events): a ruler, the steps pinned under it, then GPU streams (with each GPU's memory as a
// level graph) and CPU threads by process.
// Each repaint asks lod.h for the boxes of the visible lanes only. Wheel zooms around the cursor
// (Shift+wheel scrolls), dragging pans, Shift+drag or right-drag selects a time range; keys W/S zoom,
// A/D pan, F fits, Z zooms to the selection. Layout lives in timeline_layout.cpp, painting in
// timeline_paint.cpp, input in this class's .cpp.

#include "app/session.h"
#include "timeline/lod.h"

#include <QElapsedTimer>
#include <QWidget>
#include <memory>
#include <optional>
#include <vector>

class QScrollBar;

namespace tuneup::gui {

class TimelineView : public QWidget {
    Q_OBJECT
public:
    explicit TimelineView(QWidget* parent = nullptr);
    ~TimelineView() override;

    void setSession(std::shared_ptr<const Session> session);
    const Session* session() const { return m_session.get(); }

    // The time range shown and its mapping onto the track area.
    TimeRange visibleRange() const { return m_visible; }
    void setVisibleRange(TimeRange range); // clamped to the trace
    TimeMapping mapping() const;
    void fitAll();
    void zoomToSelection();
    void zoomBy(double factor); // around the cursor when it is over the tracks, else the centre
    void panBy(double fractionOfWidth); // positive: later

    // The selected event (details pane) and the highlighted evidence of the chosen finding.
    EventId selectedEvent() const { return m_selected; }
    void selectEvent(const EventId& id, bool scrollTo = true);
    void setEvidence(const std::vector<EventId>& events, std::vector<TimeRange> spans);
    const std::vector<EventId>& evidenceEvents() const { return m_evidence; }
    std::optional<TimeRange> selectedRange() const { return m_range; }
    void setSelectedRange(std::optional<TimeRange> range);

    // Search: events whose name contains `text` (case-insensitive) are drawn in colour, the rest faded.
    void setFilter(const QString& text);
    QString filter() const { return m_filterText; }
    size_t filterMatches() const { return m_filterMatches; }
    // Selects the next (or previous) match after the selection, or after the view's start; false when none.
    bool selectNextMatch(bool backwards = false);

    // Geometry, for tests and the benchmark: where an event is drawn now, and what is under a point.
    QRectF eventRect(const EventId& id) const;
    std::optional<EventId> eventAt(QPoint pos, uint32_t* folded = nullptr) const;
    QRect trackArea() const;
    int trackAreaLeft() const { return kLabelWidth; }
    // Painting statistics: paints so far, and the time of the last one.
    int paintCount() const { return m_paints; }
    double lastPaintMs() const { return m_lastPaintMs; }
    void setCollapsed(uint32_t track, bool collapsed);

    static constexpr int kLabelWidth = 230;
    static constexpr int kRulerHeight = 24;
    static constexpr int kLaneHeight = 17;
    static constexpr int kGroupHeight = 18;
    static constexpr int kMemoryHeight = 2 * kLaneHeight + 6; // a memory track's level graph
    static constexpr QRgb kMemoryPeakRgb = qRgb(0xd0, 0x5a, 0x1e); // the bars of the allocator's step peaks

signals:
    void eventSelected(const tuneup::gui::EventId& id); // invalid id: cleared
    void visibleRangeChanged(const tuneup::gui::TimeRange& range);

protected:
    void paintEvent(QPaintEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void mouseDoubleClickEvent(QMouseEvent* event) override;
    void wheelEvent(QWheelEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;
    bool event(QEvent* event) override;

private:
    // Vertical layout (timeline_layout.cpp): one row per lane, and headings where the process changes.
    struct Row {
        enum Type : uint8_t { Heading, Lane } type = Lane;
        uint32_t track = 0;
        uint32_t lane = 0;
        int y = 0; // in content coordinates: scrolled rows from the top of the scrolled area
        int height = kLaneHeight;
        bool pinned = false; // steps: under the ruler, never scrolled
    };
    void relayout();
    int pinnedHeight() const { return m_pinnedHeight; }
    int rowTop(const Row& row) const; // in widget coordinates
    const Row* rowAt(int y) const;
    const Row* laneRow(uint32_t track, uint32_t lane) const;
    void updateScrollBar();
    void ensureRowVisible(const Row& row);

    // Painting (timeline_paint.cpp).
    void paintRuler(QPainter& p, const TimeMapping& m);
    void paintStepBands(QPainter& p, const TimeMapping& m, int top, int bottom);
    void paintLane(QPainter& p, const TimeMapping& m, const Row& row, int y);
    void paintMemoryLane(QPainter& p, const TimeMapping& m, const Row& row, int y);
    void paintLabels(QPainter& p);
    void paintOverlays(QPainter& p, const TimeMapping& m);

    // Search (timeline_search.cpp): the matching events of each lane, as a lane of their own.
    struct FilteredLane {
        std::vector<int64_t> starts, ends;
        std::vector<uint32_t> index; // in the lane
    };
    void rebuildFilter();

    void changeVisible(TimeRange range);
    std::optional<double> cursorX() const;

    std::shared_ptr<const Session> m_session;
    const TimelineData* m_data = nullptr;
    TimeRange m_visible { 0, 1 };
    EventId m_selected;
    std::vector<EventId> m_evidence;
    std::vector<TimeRange> m_evidenceSpans;
    std::optional<TimeRange> m_range;
    QString m_filterText;
    std::vector<std::vector<FilteredLane>> m_filtered; // [track][lane], empty without a filter
    size_t m_filterMatches = 0;

    std::vector<Row> m_rows;
    std::vector<std::vector<int>> m_rowOfLane; // [track][lane] -> index in m_rows, -1 when hidden
    std::vector<bool> m_collapsed; // per track
    int m_pinnedHeight = 0;
    int m_contentHeight = 0;
    int m_scrollY = 0;
    QScrollBar* m_scrollBar = nullptr;

    // Mouse state.
    enum class Drag { None, Pan, Range } m_drag = Drag::None;
    QPoint m_pressPos, m_lastPos;
    bool m_moved = false;
    int64_t m_rangeAnchor = 0;

    mutable std::vector<LodBox> m_boxes; // reused between lanes and paints
    int m_paints = 0;
    double m_lastPaintMs = 0;
};

} // namespace tuneup::gui
