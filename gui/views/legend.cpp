#include "views/legend.h"

#include "timeline/event_kind.h"

#include <QPainter>

namespace tuneup::gui {

Legend::Legend(QWidget* parent)
    : QWidget(parent)
{
    setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Fixed);
}

QSize Legend::sizeHint() const
{
    return { 600, fontMetrics().height() + 6 };
}

void Legend::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    const QFontMetrics fm = fontMetrics();
    const int box = fm.height() - 4;
    int x = 4;
    for (const EventKind kind : kLegendKinds) {
        const KindStyle& style = kindStyle(kind);
        const QString label = QString::fromUtf8(style.label.data(), qsizetype(style.label.size()));
        const int w = box + 4 + fm.horizontalAdvance(label) + 14;
        if (x + w > width())
            break;
        p.fillRect(QRect(x, (height() - box) / 2, box, box), QColor::fromRgb(style.rgb));
        p.setPen(palette().color(QPalette::WindowText));
        p.drawText(QRect(x + box + 4, 0, w, height()), Qt::AlignLeft | Qt::AlignVCenter, label);
        x += w;
    }
}

} // namespace tuneup::gui
