#include "views/legend.h"

#include "timeline/event_kind.h"

#include <QPainter>

namespace tuneup::gui {

namespace {

QString labelOf(EventKind kind) {
    const KindStyle& style = kindStyle(kind);
    return QString::fromUtf8(style.label.data(), qsizetype(style.label.size()));
}

} // namespace

Legend::Legend(QWidget* parent)
    : QWidget(parent) {
    QSizePolicy policy(QSizePolicy::Preferred, QSizePolicy::Fixed);
    policy.setHeightForWidth(true);
    setSizePolicy(policy);
}

std::vector<QRect> Legend::entryRects(int width) const {
    const QFontMetrics fm = fontMetrics();
    const int box = fm.height() - 4, line = fm.height() + 6;
    std::vector<QRect> rects;
    int x = 4, y = 0;
    for (const EventKind kind : kLegendKinds) {
        const int w = box + 4 + fm.horizontalAdvance(labelOf(kind)) + 14;
        if (x > 4 && x + w > width) {
            x = 4;
            y += line;
        }
        rects.emplace_back(x, y, w, line);
        x += w;
    }
    return rects;
}

int Legend::heightForWidth(int width) const {
    const std::vector<QRect> rects = entryRects(width);
    return rects.empty() ? fontMetrics().height() + 6 : rects.back().bottom() + 1;
}

QSize Legend::sizeHint() const {
    return { 600, heightForWidth(600) };
}

void Legend::paintEvent(QPaintEvent*) {
    QPainter p(this);
    const int box = fontMetrics().height() - 4;
    const std::vector<QRect> rects = entryRects(width());
    for (size_t i = 0; i < rects.size(); ++i) {
        const EventKind kind = kLegendKinds[i];
        const QRect& r = rects[i];
        p.fillRect(QRect(r.x(), r.y() + (r.height() - box) / 2, box, box), QColor::fromRgb(kindStyle(kind).rgb));
        p.setPen(palette().color(QPalette::WindowText));
        p.drawText(
            QRect(r.x() + box + 4, r.y(), r.width(), r.height()), Qt::AlignLeft | Qt::AlignVCenter, labelOf(kind));
    }
}

} // namespace tuneup::gui
